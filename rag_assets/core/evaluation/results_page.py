"""The headline tables of docs/results.md, generated from one run's outputs instead of typed.

Each collection's latest evaluation report writes `summary.json` (core/evaluation/report.py): the
evidence table over every evaluation question, the reader rows (answer metrics of every strategy),
the answer forms (generated against extractive, paired, and the default form) and the router
metrics, with the ids of the runs that produced them. `headline_markdown` renders those four
tables, each captioned with the run it comes from; `write_generated` puts them into a results page
between two marker lines, replacing what an earlier generation wrote there, so a figure in the page is the catalogue's and says which run measured it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from rag_assets.core.files import write_text_atomically
from rag_assets.core.tables import markdown_table

SUMMARY_FILE = "summary.json"
READER_METRICS = ("right", "correct", "f1", "rouge_l", "yes_no_acc", "passage_hit", "evidence_words", "first_cite_gold")
ROUTER_METRICS = ("ans_f1", "exp_pre", "ref_acc")


class ResultsPageError(ValueError):
    """A results page or report that cannot be used, named with what is wrong."""


def latest_summaries(reports_root: Path, collections: Sequence[str] | None = None) -> list[dict]:
    """The `latest/summary.json` of each collection under `reports_root` (all when none named)."""
    if not reports_root.is_dir():
        raise ResultsPageError(f"{reports_root} holds no evaluation reports: run `rag run` first")
    names = list(collections) if collections else sorted(p.name for p in reports_root.iterdir() if p.is_dir())
    summaries = []
    for name in names:
        path = reports_root / name / "latest" / SUMMARY_FILE
        if not path.is_file():
            raise ResultsPageError(f"no evaluation report for collection {name!r} ({path} is missing)")
        summaries.append(json.loads(path.read_text(encoding="utf-8")))
    return summaries


def _run_of(summary: Mapping, asset: str) -> str:
    record = summary.get("versions", {}).get("assets", {}).get(asset) or {}
    return str(record.get("run_id") or "-")


def _number(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 10 else f"{value:.0f}"
    return str(value)


def _with_interval(stat: Mapping) -> str:
    return f"{_number(stat['mean'])} ({_number(stat['low'])}-{_number(stat['high'])})"


def evidence_rows(summary: Mapping) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the evidence table: each strategy's evidence metrics with 95% intervals."""
    collection = summary["collection"]
    evidence = (summary.get("evidence") or {}).get(collection)
    if not evidence:
        return [], []
    metrics = list(dict.fromkeys(m for row in evidence["rows"].values() for m in row))
    header = ["strategy", *metrics]
    rows = [
        [name, *(_with_interval(row[m]) if m in row else "-" for m in metrics)]
        for name, row in evidence["rows"].items()
    ]
    return header, rows


def _reader_cell(row: Mapping, intervals: Mapping, metric: str) -> str:
    if metric not in row:
        return "-"
    low_high = intervals.get(metric)
    # the share of right answers (the figure the forms are chosen by) and of correct ones
    if metric in ("right", "correct") and low_high:
        return _with_interval({"mean": row[metric], "low": low_high[0], "high": low_high[1]})
    return _number(row[metric])


def reader_rows(summary: Mapping) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the reader table: each strategy's answer metrics on the evaluated split,
    the share of right answers with its 95% interval."""
    collection = summary["collection"]
    results = (summary.get("results") or {}).get(collection) or {}
    intervals = (summary.get("intervals") or {}).get(collection) or {}
    metrics = [m for m in READER_METRICS if any(m in row for row in results.values())]
    header = ["strategy", "questions", *metrics]
    rows = [
        [
            name,
            _number(int(row.get("questions", 0))),
            *(_reader_cell(row, intervals.get(name) or {}, m) for m in metrics),
        ]
        for name, row in results.items()
    ]
    return header, rows


def form_rows(summary: Mapping) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the answer-forms table: per strategy, the share of right answers of each
    form, their paired difference, the collection's default form and whether it is right at least
    as often as the better form (`within noise` where it is lower but the interval holds 0)."""
    collection = summary["collection"]
    forms = (summary.get("answer_forms") or {}).get(collection) or {}
    results = (summary.get("results") or {}).get(collection) or {}
    default = forms.get("default") or "-"
    header = [
        "strategy",
        "questions",
        "right, generated",
        "right, extractive",
        "extractive - generated (95% CI)",
        "default form",
        "default as often right as the better form",
    ]
    rows = []
    for paired in forms.get("paired") or []:
        difference = (paired.get("differences") or {}).get("right")
        generated, extractive = results.get(paired["base"], {}), results.get(paired["system"], {})
        if difference is None or "right" not in generated or "right" not in extractive:
            continue
        mine, other = (extractive, generated) if default == "extractive" else (generated, extractive)
        if mine["right"] >= other["right"]:
            verdict = "yes"
        else:
            verdict = "within noise" if difference["low"] <= 0 <= difference["high"] else "no"
        rows.append(
            [
                paired["base"],
                _number(int(paired.get("questions", 0))),
                _number(generated["right"]),
                _number(extractive["right"]),
                f"{difference['mean']:+.3f} ({difference['low']:+.2f} to {difference['high']:+.2f})",
                default,
                verdict,
            ]
        )
    return header, rows


def correctness_rows(summary: Mapping) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the correctness table by question type, as the report shows it (none for a
    set without question types)."""
    section = (summary.get("correctness") or {}).get(summary["collection"]) or []  # the report's section
    return (list(section[1]), [list(row) for row in section[2]]) if section else ([], [])


def router_rows(summary: Mapping) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the router table: each router model's routing quality with intervals."""
    collection = summary["collection"]
    routers = (summary.get("router_metrics") or {}).get(collection) or {}
    header = ["router", "views", *ROUTER_METRICS]
    rows = []
    for name, row in routers.items():
        cells = []
        for m in ROUTER_METRICS:
            low, high = row.get(f"{m}_low"), row.get(f"{m}_high")
            value = _number(row[m]) if m in row else "-"
            cells.append(f"{value} ({_number(low)}-{_number(high)})" if low is not None and high is not None else value)
        rows.append([name, _number(int(row.get("samples", 0))), *cells])
    return header, rows


def headline_markdown(summaries: Iterable[Mapping]) -> str:
    """The headline tables of each collection, each captioned with the run that produced it."""
    parts = []
    for summary in summaries:
        collection = summary["collection"]
        parts.append(f"### {collection}\n")
        for title, asset, (header, rows) in (
            ("Evidence over every evaluation question (no reader)", "evidence_evaluation", evidence_rows(summary)),
            (f"Reader rows ({summary.get('split', '?')} split)", "answers", reader_rows(summary)),
            ("Answer forms: the share of right answers, paired", "answers", form_rows(summary)),
            ("Answer correctness by question type", "answers", correctness_rows(summary)),
            ("Router metrics (held-out views)", "router_metrics", router_rows(summary)),
        ):
            if not rows:
                continue
            parts.append(
                f"**{title}** — run `{_run_of(summary, asset)}`, report of {summary.get('created_at', '?')}\n\n"
                f"{markdown_table(header, rows)}\n"
            )
    return "\n".join(parts)


def markers(name: str) -> tuple[str, str]:
    return f"<!-- generated by `rag results --write` ({name}): start -->", f"<!-- generated ({name}): end -->"


def write_generated(page: Path, name: str, markdown: str) -> None:
    """Put `markdown` between `name`'s two marker lines of `page` (appended with them where the
    page has none yet), atomically: a killed write leaves the previous page."""
    start, end = markers(name)
    text = page.read_text(encoding="utf-8") if page.exists() else ""
    block = f"{start}\n{markdown.rstrip()}\n{end}"
    if start in text:
        if end not in text or text.index(end) < text.index(start):
            raise ResultsPageError(f"{page}: the marker {start!r} has no end marker after it")
        text = text[: text.index(start)] + block + text[text.index(end) + len(end) :]
    else:
        text = f"{text.rstrip()}\n\n{block}\n" if text else f"{block}\n"
    write_text_atomically(page, text)


def generated_block(page: Path, name: str) -> str:
    """What the last generation wrote between `name`'s markers in `page` ('' when none)."""
    start, end = markers(name)
    text = page.read_text(encoding="utf-8") if page.exists() else ""
    if start not in text or end not in text:
        return ""
    return text[text.index(start) + len(start) : text.index(end)].strip()
