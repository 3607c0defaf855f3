"""Reliability drill: a hostile corpus, `kill -9` during every index stage, then one more run.

1. Writes a collection of good Markdown documents plus hostile entries (binary, bad encoding,
   empty, over the word cap, duplicate content, dangling / looping / folder symlinks, broken
   JSONL lines, a JSON file that is no manual, pathological nesting, control characters).
2. Starts `rag index -c drill` in a fresh Dagster instance and data folder, and SIGKILLs it as
   soon as the chosen step starts, once per stage (sources, trees, passages, index), and once
   5 s into the index step (embedding / LanceDB writes under way).
3. Runs `rag index -c drill` once more: it must fail the killed runs ("recovered") and succeed.
4. Accounts for every entry: indexed (documents -> trees -> passages -> LanceDB rows) or
   rejected with a reason; anything else is "lost". A run that failed other than by the kill is
   "crashed". The catalogue's passages and the LanceDB rows must agree.

    .venv/bin/python -m benchmarks.reliability_drill [--good 30] [--stages all] [--keep DIR]

Prints documents tried / indexed / rejected / crashed / lost and runs killed / recovered, and
exits 1 unless crashed = lost = 0, every kill was recovered and the stores agree.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# where to kill: a step, or `step+S` for S seconds after it started (mid-embedding for the index)
STAGES = ("source_documents", "document_trees", "passages", "passage_index", "passage_index+5")
WORD_CAP = 3000  # max_document_words for the drill (the default is 500,000)
RAG = [sys.executable, "-m", "rag_assets.cli"]


def good_document(rng: random.Random, n: int) -> str:
    words = [
        "kettle",
        "pond",
        "lighthouse",
        "tide",
        "battery",
        "filter",
        "lid",
        "switch",
        "water",
        "light",
        "tower",
        "season",
    ]

    def sentence() -> str:
        return " ".join(rng.choice(words) for _ in range(rng.randint(6, 14))).capitalize() + "."

    parts = [f"# Document {n}", "", sentence(), ""]
    for s in range(rng.randint(1, 4)):
        parts += [f"## Section {n}.{s}", "", " ".join(sentence() for _ in range(rng.randint(1, 6))), ""]
        if rng.random() < 0.5:
            parts += [f"- {sentence()}" for _ in range(3)] + [""]
    return "\n".join(parts)


def write_corpus(folder: Path, good: int, seed: int = 7) -> dict[str, str]:
    """Writes the collection; returns {uri: what it is} for every entry a run should account for."""
    return {**write_good(folder, good, seed), **write_hostile(folder, WORD_CAP)}


def write_good(folder: Path, good: int, seed: int = 7) -> dict[str, str]:
    """`good` small Markdown documents (good-000.md ...); returns {uri: "good"}."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    entries: dict[str, str] = {}
    for n in range(good):
        path = folder / f"good-{n:03d}.md"
        path.write_text(good_document(rng, n), encoding="utf-8")
        entries[str(path)] = "good"
    return entries


def write_hostile(folder: Path, word_cap: int) -> dict[str, str]:
    """The drill's hostile entries, next to the good documents in `folder` (one is a copy of
    good-000.md; `over-the-cap.txt` has `word_cap` + 1 words); returns {uri: what it is}."""
    entries: dict[str, str] = {}
    hostile = {
        "binary.md": b"\x00\x01\x02\x03 binary",
        "latin1.md": "# Café\n\ncrème brûlée".encode("latin-1"),
        "empty.md": b"  \n\n",
        "over-the-cap.txt": ("word " * (word_cap + 1)).encode(),
        "one-long-line.md": ("# Long\n\n" + "lorem ipsum " * 1200).encode(),  # under the cap: indexed
        "nesting.md": "\n".join(f"{'#' * (1 + i % 6)} Level {i}\n\ntext {i}" for i in range(300)).encode(),
        "control-chars.md": "# Ctl\n\nbell \x07 escape \x1b[31m red \u202e rtl \U0001f600".encode(),
        "unclosed.html": b"<html><body><h1>Open<p>never closed<ul><li>item<li>item 2<table><tr><td>cell",
        "not-a-manual.json": b'{"just": ["a", "list"], "of": 3}',
        "zz-duplicate.md": (folder / "good-000.md").read_bytes(),
    }
    for name, data in hostile.items():
        (folder / name).write_bytes(data)
        entries[str(folder / name)] = name
    pages = folder / "pages.jsonl"
    pages.write_text(
        "\n".join(
            [
                json.dumps({"doc_id": "p1", "title": "Page one", "html": "<h1>One</h1><p>First page.</p>"}),
                "{broken json",
                json.dumps([1, 2, 3]),
                json.dumps({"doc_id": "p2", "markdown": "# Two\n\nSecond page."}),
                json.dumps({"doc_id": "p3", "nothing": "useful"}),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    for line in range(1, 6):
        entries[f"{pages}#line={line}"] = f"pages.jsonl line {line}"
    (folder / "dangling.md").symlink_to(folder / "gone.md")
    (folder / "loop.md").symlink_to(folder / "loop.md")
    outside = folder.parent / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("# Outside\n\nnot part of the collection\n")
    (folder / "folder-link").symlink_to(outside, target_is_directory=True)
    for name in ("dangling.md", "loop.md", "folder-link"):
        entries[str(folder / name)] = name
    return entries


def run_ids(home: Path) -> set[str]:
    import dagster as dg

    with dg.DagsterInstance.from_config(str(home)) as instance:
        return set(instance.get_run_ids())


def wait_for_step(
    home: Path, step: str, process: subprocess.Popen, before: set[str], timeout_s: float = 900
) -> str | None:
    """The run id once `step` has started in the run `process` started (None if it ended first);
    runs that existed before it (`before`: killed ones still marked STARTED) are not it."""
    import dagster as dg

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and process.poll() is None:
        with dg.DagsterInstance.from_config(str(home)) as instance:
            runs = [r for r in instance.get_runs(limit=len(before) + 1) if r.run_id not in before]
            if runs and runs[0].status == dg.DagsterRunStatus.STARTED:
                started = instance.get_records_for_run(runs[0].run_id, of_type=dg.DagsterEventType.STEP_START).records
                if any(r.event_log_entry.step_key == step for r in started):
                    return runs[0].run_id
        time.sleep(0.2)
    return None


def account(data: Path, entries: dict[str, str]) -> dict:
    from benchmarks.common import catalogue_in
    from rag_assets.core.index.vector_index import PassageIndex
    from rag_assets.core.store.collections import collection_frame
    from rag_assets.core.store.connections import catalogue_connection
    from rag_assets.core.store.document_tables import load_documents
    from rag_assets.core.store.passage_table import load_passages
    from rag_assets.core.store.tree_tables import tree_doc_ids

    with catalogue_connection(catalogue_in(data), read_only=True) as con:
        docs = {d.uri: d.doc_id for d in load_documents(con, "drill")}
        rejections = collection_frame(con, "rejected_documents", ["uri", "reason"], "drill")
        rejected = dict(zip(rejections["uri"], rejections["reason"]))
        with_trees = set(tree_doc_ids(con, "drill"))
        passages = [(p.passage_id, p.content_hash, p.doc_id) for p in load_passages(con, "drill")]

    class _NoEmbedder:  # reading rows needs no model; the schema needs only the dimension
        dimension = 384

    rows = PassageIndex(data / "lancedb", _NoEmbedder()).passage_pairs("drill")
    with_passages = {doc for _, _, doc in passages}
    indexed = {uri for uri, doc in docs.items() if doc in with_trees and doc in with_passages}
    out = {"indexed": [], "rejected": [], "lost": []}
    for uri, what in entries.items():
        if uri in rejected:
            out["rejected"].append((what, rejected[uri]))
        elif uri in indexed:
            out["indexed"].append(what)
        else:
            out["lost"].append(what)
    out["stores_agree"] = sorted((p, h) for p, h, _ in passages) == rows and len(rows) == len(set(rows))
    out["passages"], out["index_rows"] = len(passages), len(rows)
    return out


def index_command(work: Path, word_cap: int) -> tuple[dict[str, str], list[str]]:
    """A Dagster home (`work`/home) and data folder (`work`/data) for the collection `drill` of
    the files in `work`/corpus, read with `word_cap`; returns the environment and the
    `rag index -c drill` command."""
    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    (work / "collections.yaml").write_text(f"collections:\n  - name: drill\n    path: {work / 'corpus'}\n")
    (work / "run.yaml").write_text(f"resources:\n  sources:\n    config:\n      max_document_words: {word_cap}\n")
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "RAG_DATA_DIR": str(work / "data"),
        "RAG_COLLECTIONS": str(work / "collections.yaml"),
        "PYTHONPATH": str(ROOT),
    }
    return env, [*RAG, "index", "-c", "drill", "--config", str(work / "run.yaml")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--good", type=int, default=30, help="good documents in the collection")
    parser.add_argument("--stages", default="all", help=f"comma-separated steps to kill in, or all: {STAGES}")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it (default: a temporary one)")
    args = parser.parse_args()
    stages = STAGES if args.stages == "all" else tuple(s.strip() for s in args.stages.split(","))
    work = args.keep or Path(tempfile.mkdtemp(prefix="rag-drill-"))
    work.mkdir(parents=True, exist_ok=True)
    home, data = work / "home", work / "data"
    entries = write_corpus(work / "corpus", args.good)
    env, command = index_command(work, WORD_CAP)
    killed_runs: list[str] = []
    missed: list[str] = []
    started = time.monotonic()
    for stage in stages:
        step, _, delay = stage.partition("+")
        before = run_ids(home) if (home / "storage").exists() else set()
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        run_id = wait_for_step(home, step, process, before)
        if run_id and delay:
            time.sleep(float(delay))
            run_id = run_id if process.poll() is None else None
        if run_id:
            process.send_signal(signal.SIGKILL)
            killed_runs.append(run_id)
            when = f"{delay} s after step {step} started" if delay else f"as step {step} started"
            print(f"killed `rag index` (run {run_id[:8]}) with SIGKILL {when}")
        else:
            missed.append(stage)
            print(f"step {stage} never started before the run ended (exit {process.poll()}); not killed")
        process.wait()
    final = subprocess.run(command, env=env, capture_output=True, text=True)
    import dagster as dg

    with dg.DagsterInstance.from_config(str(home)) as instance:  # each killed run failed by a later command
        recovered = sum(instance.get_run_by_id(r).status == dg.DagsterRunStatus.FAILURE for r in killed_runs)
        in_progress = len(instance.get_runs(filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED])))
        event = instance.get_latest_materialization_event(dg.AssetKey("source_documents"))
        duplicates = event.asset_materialization.metadata.get("duplicates") if event else None
    killed = len(killed_runs)
    crashed = 0 if final.returncode == 0 else 1
    if crashed:
        print(final.stdout[-3000:] + final.stderr[-3000:])
    tally = account(data, entries)
    print()
    print(f"documents tried:     {len(entries)} ({args.good} good, {len(entries) - args.good} hostile entries)")
    print(f"documents indexed:   {len(tally['indexed'])}")
    print(f"documents rejected:  {len(tally['rejected'])}")
    for what, reason in tally["rejected"]:
        print(f"  - {what}: {reason}")
    print(f"duplicates reported: {duplicates.value if duplicates else 'n/a'} (kept: sources.duplicates = keep)")
    print(f"documents crashed:   {crashed} (runs that failed other than by a kill)")
    print(f"documents lost:      {len(tally['lost'])} {tally['lost'] or ''}")
    print(f"runs killed:         {killed} (SIGKILL at {', '.join(s for s in stages if s not in missed)})")
    print(f"runs recovered:      {recovered} (marked failed by the next `rag index`); still STARTED: {in_progress}")
    print(f"stores agree:        {tally['stores_agree']} ({tally['passages']} passages, {tally['index_rows']} rows)")
    print(f"drill time:          {time.monotonic() - started:.0f} s; work folder {work}")
    ok = not crashed and not tally["lost"] and recovered == killed and not in_progress and tally["stores_agree"]
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
