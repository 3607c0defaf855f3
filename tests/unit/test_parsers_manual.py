"""Samsung e-manual JSON -> blocks: section order and levels, validation, the real manuals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_assets.core.corpus.blocks import heading, list_item, paragraph, table_row
from rag_assets.core.corpus.parsers import ParseError, guess_title, parse_blocks
from rag_assets.core.corpus.parsers.manual_json import parse_manual_json, repair_mojibake
from rag_assets.core.corpus.tree import build_tree, render_tree, tree_problems

DATASETS = Path(__file__).resolve().parents[2].parent / "shared" / "datasets"


def section(heading_html: str, *body: str, title: str = "", hierarchy: str | None = None) -> dict:
    entry: dict = {"title": title, "text": [], "html": [heading_html, *body]}
    if hierarchy is not None:
        entry["section_hierarchy"] = hierarchy
    return entry


MANUAL = {
    # Keys out of order on purpose: section_10 must come after section_2.
    "section_10": section("<h3>Wi-Fi</h3>", "<p>Connect to a network.</p>", hierarchy="section_1>section_10"),
    "section_0": section(
        '<h2 id="x">\n Getting started\n</h2>\n', "<p>Charge the battery first.</p>", hierarchy="section_0"
    ),
    "section_2": section(
        "<h3>Battery</h3>",
        "<p>Use the friend\u00e2\u0080\u0099s charger.</p>",
        "<ul><li>Plug in.</li><li>Wait.</li></ul>",
        "<topic><h4>Tips</h4><table><tr><td>Fast</td><td>15 W</td></tr></table></topic>",
        hierarchy="section_0>section_2",
    ),
    "section_1": section("<h2>Connections</h2>", hierarchy="section_1"),
}


def test_sections_in_numeric_order_with_hierarchy_levels() -> None:
    assert parse_manual_json(json.dumps(MANUAL)) == [
        heading("Getting started", 1),
        paragraph("Charge the battery first."),
        heading("Connections", 1),
        heading("Battery", 2),
        paragraph("Use the friend’s charger."),  # mojibake repaired
        list_item("Plug in.", 1),
        list_item("Wait.", 1),
        heading("Tips", 3),  # a sub-topic inside the section nests one below it
        table_row(["Fast", "15 W"]),
        heading("Wi-Fi", 2),
        paragraph("Connect to a network."),
    ]


def test_tree_of_the_manual() -> None:
    tree = build_tree("Phone", parse_blocks("manual_json", json.dumps(MANUAL)))
    assert render_tree(tree.nodes) == "\n".join(
        [
            "0: Phone",
            "  1: Getting started",
            "    2: Charge the battery first.",
            "  3: Connections",
            "    4: Battery",
            "      5: Use the friend’s charger.",
            "        6: Plug in.",
            "        7: Wait.",
            "      8: Tips",
            "        9: Fast | 15 W",
            "    10: Wi-Fi",
            "      11: Connect to a network.",
        ]
    )
    assert tree_problems(tree.nodes, tree.text) == []


def test_without_hierarchy_the_heading_tag_gives_the_level() -> None:
    manual = {
        "section_0": section("<h1>Top</h1>"),
        "section_1": section("<h3>Third</h3>", "<h5>Inner</h5>"),
        "section_2": section("<p>not a heading</p>", title="From title"),
    }
    assert parse_manual_json(json.dumps(manual)) == [
        heading("Top", 1),
        heading("Third", 3),
        heading("Inner", 5),
        heading("From title", 1),
        paragraph("not a heading"),
    ]


def test_empty_heading_falls_back_to_title_then_key() -> None:
    manual = {"section_0": section("<h2> </h2>", title="Named"), "section_1": section("<h2></h2>")}
    assert parse_manual_json(json.dumps(manual)) == [heading("Named", 2), heading("section_1", 2)]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "manual_json: not valid JSON"),
        ("[1, 2]", "manual_json: top level is a JSON list"),
        ("{}", "manual_json: no sections"),
        ('{"chapter": {"html": []}}', "manual_json: key 'chapter' is not of the form section_N"),
        ('{"section_0": "text"}', "manual_json: section_0 is a JSON str, expected an object"),
        ('{"section_0": {"html": "not a list"}}', "manual_json: section_0 has no 'html' list of strings"),
        ('{"section_0": {"title": "x"}}', "manual_json: section_0 has no 'html' list of strings"),
        ('{"section_0": {"html": [1]}}', "manual_json: section_0 has no 'html' list of strings"),
        (
            '{"section_0": {"html": [], "section_hierarchy": 3}}',
            "manual_json: section_0.section_hierarchy is not a string",
        ),
    ],
)
def test_malformed_manuals_raise_a_clear_parse_error(text: str, message: str) -> None:
    with pytest.raises(ParseError, match="^" + message.replace("(", r"\(")):
        parse_blocks("manual_json", text)
    assert issubclass(ParseError, ValueError)


def test_title_only_when_there_is_a_single_top_section() -> None:
    assert guess_title("manual_json", json.dumps(MANUAL)) is None  # two chapters: no own title
    single = {
        "section_0": section("<h1>Galaxy Guide</h1>", title="Galaxy Guide", hierarchy="section_0"),
        "section_1": section("<h2>Intro</h2>", hierarchy="section_0>section_1"),
    }
    assert guess_title("manual_json", json.dumps(single)) == "Galaxy Guide"
    tree = build_tree("Galaxy Guide", parse_blocks("manual_json", json.dumps(single)))
    assert render_tree(tree.nodes) == "0: Galaxy Guide\n  1: Intro"
    with pytest.raises(ParseError):
        guess_title("manual_json", "[]")


def test_mojibake_repair_is_local_and_leaves_good_text_alone() -> None:
    assert repair_mojibake("friend\u00e2\u0080\u0099s ™ café") == "friend’s ™ café"
    assert repair_mojibake("plain ascii") == "plain ascii"
    assert repair_mojibake("naïve Ã") == "naïve Ã"
    assert repair_mojibake("Tap\u00c2\nMore") == "Tap \nMore"  # a half no-break space
    assert repair_mojibake("Wi-Fi\u00c2\u00ae") == "Wi-Fi®"


def _manuals() -> list[Path]:
    folder = DATASETS / "emanual" / "manuals"
    if not folder.is_dir():
        pytest.skip(f"real dataset {folder} is absent (only beside the project, never in a fresh clone)")
    return sorted(folder.glob("*.json"))


def test_every_real_manual_makes_a_valid_tree() -> None:
    manuals = _manuals()
    assert manuals
    for path in manuals:
        text = path.read_text(encoding="utf-8")
        tree = build_tree(guess_title("manual_json", text) or path.stem, parse_blocks("manual_json", text))
        assert tree_problems(tree.nodes, tree.text) == [], path.name
        assert tree.content_count > 0, path.name
        assert "\u00e2\u0080" not in tree.text and "\ufeff" not in tree.text, path.name


def test_gold_section_paths_of_the_galaxy_s10_questions_are_heading_paths() -> None:
    _manuals()
    text = (DATASETS / "emanual" / "manuals" / "Galaxy_S10.json").read_text(encoding="utf-8")
    tree = build_tree("Galaxy_S10", parse_blocks("manual_json", text))
    paths = {n.heading_path[1:] for n in tree.nodes if n.kind == "structure"}
    questions = [
        json.loads(line)
        for line in (DATASETS / "emanual" / "questions_dev.jsonl").read_text().splitlines()
        if line.strip()
    ]
    gold = [tuple(q["section_path"]) for q in questions if q["manual"] == "Galaxy_S10"]
    assert gold
    missing = [path for path in gold if path not in paths]
    assert missing == []  # 25 of 25 with section_hierarchy depths (0 of 25 with the h-tag levels)


def test_content_sharing_the_heading_item_is_kept() -> None:
    manual = {"section_0": section("<h2>Wi-Fi</h2><p>Same item as the heading.</p>", "<p>Next item.</p>")}
    assert parse_manual_json(json.dumps(manual)) == [
        heading("Wi-Fi", 2),
        paragraph("Same item as the heading."),
        paragraph("Next item."),
    ]
