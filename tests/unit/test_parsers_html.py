"""HTML -> blocks: structure, NQ token HTML, malformed and pathological markup, real pages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_assets.core.corpus.blocks import code, heading, list_item, paragraph, table_row
from rag_assets.core.corpus.parsers import guess_title, parse_blocks
from rag_assets.core.corpus.parsers.html import parse_html
from rag_assets.core.corpus.tree import build_tree, render_tree, tree_problems

DATASETS = Path(__file__).resolve().parents[2].parent / "shared" / "datasets"

POND = """\
<html><head><title>Garden pond</title><style>p { color: red }</style></head><body>
<h1>Garden pond</h1>
<p>A pond needs care in <em>every</em> season &amp; weather.</p>
<h2>Spring</h2>
<p>Clean the filter:</p>
<ul><li>rinse the sponge</li><li>check the pump<ol><li>unplug it</li></ol>then refit</li></ul>
<h4>Skipped level</h4>
<table><tr><th>month</th><th>task</th></tr><tr><td>March</td><td><p>feed</p><ul><li>fish</li><li>plants</li></ul></td></tr></table>
<pre>  net = Net()
  net.cast()</pre>
<script>document.write("<p>not text</p>")</script>
<div>Loose text in a div.<div>Nested loose text.</div>Tail text.</div>
</body></html>
"""


def test_document_gives_the_exact_blocks() -> None:
    assert parse_html(POND) == [
        heading("Garden pond", 1),
        paragraph("A pond needs care in every season & weather."),
        heading("Spring", 2),
        paragraph("Clean the filter:"),
        list_item("rinse the sponge", 1),
        list_item("check the pump", 1),
        list_item("unplug it", 2),
        list_item("then refit", 1),
        heading("Skipped level", 4),
        table_row(["month", "task"]),
        table_row(["March", "feed fish plants"]),
        code("net = Net()\nnet.cast()"),
        paragraph("Loose text in a div."),
        paragraph("Nested loose text."),
        paragraph("Tail text."),
    ]


def test_tree_of_the_document() -> None:
    tree = build_tree(guess_title("html", POND) or "", parse_html(POND))
    assert render_tree(tree.nodes) == "\n".join(
        [
            "0: Garden pond",
            "  1: A pond needs care in every season & weather.",
            "  2: Spring",
            "    3: Clean the filter:",
            "      4: rinse the sponge",
            "      5: check the pump",
            "        6: unplug it",
            "      7: then refit",
            "    8: Skipped level",
            "      9: month | task",
            "      10: March | feed fish plants",
            "      11: net = Net() ⏎ net.cast()",
            "      12: Loose text in a div.",
            "      13: Nested loose text.",
            "      14: Tail text.",
        ]
    )
    assert tree_problems(tree.nodes, tree.text) == []


def test_natural_questions_token_html() -> None:
    page = (
        "Lighthouse - wikipedia <H1> Lighthouse </H1> Jump to : navigation , search <Table> "
        '<Tr> <Th_colspan="2"> Lighthouse </Th> </Tr> <Tr> <Th> Type </Th> <Td> <Ul> <Li> Tower </Li> '
        '<Li> Beacon </Li> </Ul> </Td> </Tr> <Tr> <Td_colspan="6"> </Td> </Tr> </Table> '
        "<P> A lighthouse is a tower . </P> <H2> Types </H2> <Dl> <Dt> Fixed </Dt> <Dd> Always on . </Dd> </Dl> "
        "<Ul> <Li> Sector light <Ul> <Li> red </Li> </Ul> </Li> </Ul>"
    )
    assert parse_html(page) == [
        paragraph("Lighthouse - wikipedia"),
        heading("Lighthouse", 1),
        paragraph("Jump to : navigation , search"),
        table_row(["Lighthouse"]),
        table_row(["Type", "Tower Beacon"]),
        paragraph("A lighthouse is a tower ."),
        heading("Types", 2),
        list_item("Fixed", 1),
        list_item("Always on .", 1),
        list_item("Sector light", 1),
        list_item("red", 2),
    ]


def test_one_element_per_line_pages() -> None:
    lines = [
        "<h1>Overview</h1>",
        "<p>Tides rise:</p>",
        "<li>twice a day</li>",
        "<li>with the moon</li>",
        "<h2>Tables</h2>",
        "<tr><td>high</td><td>6 m</td></tr>",
    ]
    tree = build_tree("Tide", parse_html("\n".join(lines)))
    assert render_tree(tree.nodes) == "\n".join(
        [
            "0: Tide",
            "  1: Overview",
            "    2: Tides rise:",
            "      3: twice a day",
            "      4: with the moon",
            "    5: Tables",
            "      6: high | 6 m",
        ]
    )


def test_unclosed_blocks_close_at_the_next_block_or_at_the_end() -> None:
    assert parse_html("<h1>Title<p>para one<p>para <b>two<li>item<h2>Next</h3><td>cell") == [
        heading("Title", 1),
        paragraph("para one"),
        paragraph("para two"),
        list_item("item", 1),
        heading("Next", 2),
        table_row(["cell"]),
    ]
    assert parse_html("<p>never closed") == [paragraph("never closed")]
    assert parse_html("<ul><li>a<li>b</ul>after") == [list_item("a", 1), list_item("b", 1), paragraph("after")]
    assert parse_html("<table><tr><td>a<td>b<tr><td>c</table>") == [table_row(["a", "b"]), table_row(["c"])]
    assert parse_html("<pre>x\n  y") == [code("x\n  y")]


def test_stray_end_tags_and_junk_are_harmless() -> None:
    assert parse_html("</ul></li></table></tr></p></pre>text</div>") == [paragraph("text")]
    assert parse_html("<![if !supportLists]>x<!-- comment -->y") == [paragraph("xy")]
    assert parse_html("") == []
    assert parse_html("<p> </p><li>&nbsp;</li>") == []


def test_inline_tags_and_images_stay_inside_their_paragraph() -> None:
    html = '<p>From <img src="i.png"/> Camera, tap <b>Settings</b><br>now.</p><div>a<img>b</div>'
    assert parse_html(html) == [paragraph("From Camera, tap Settings now."), paragraph("a b")]


def test_nested_tables_fold_into_the_outer_cell() -> None:
    html = "<table><tr><td>outer</td><td><table><tr><td>in1</td><td>in2</td></tr></table></td></tr></table>"
    assert parse_html(html) == [table_row(["outer", "in1 in2"])]


def test_title_guess_skips_head_and_uses_title_or_h1() -> None:
    assert guess_title("html", "<title> The  title </title><h1>Heading</h1>") == "The title"
    assert guess_title("html", "<h2>Second</h2><h1>First</h1>") == "First"
    assert guess_title("html", "<p>nothing</p>") is None
    assert parse_html("<title>Hidden</title><p>shown</p>") == [paragraph("shown")]
    assert parse_html("<title>unclosed<p>shown") == [paragraph("shown")]


def test_entities_and_invisible_characters() -> None:
    assert parse_html("<p>caf&eacute; &lt;tag&gt; &#8217; \ufeff</p><p>\ufeff</p>") == [paragraph("café <tag> ’")]


def test_ten_thousand_nested_divs_and_lists() -> None:
    doc = "<h1>Deep</h1>" + "<div>" * 10_000 + "bottom text" + "<ul><li>x" * 10_000
    blocks = parse_html(doc)
    assert blocks[:2] == [heading("Deep", 1), paragraph("bottom text")]
    assert blocks[-1] == list_item("x", 10_000) and len(blocks) == 10_002
    tree = build_tree("Deep", blocks)
    assert tree_problems(tree.nodes, tree.text) == []
    assert max(n.depth for n in tree.nodes) <= 17


def test_ten_thousand_nested_tables_and_inline_tags() -> None:
    assert parse_html("<table><tr><td>" * 10_000 + "x") == [table_row(["x"])]
    assert parse_html("<b><i>" * 10_000 + "x") == [paragraph("x")]


def _pages(name: str) -> list[dict]:
    path = DATASETS / name / "pages.jsonl"
    if not path.is_file():
        pytest.skip(f"real dataset {path} is absent (only beside the project, never in a fresh clone)")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("name", ["nq_wiki", "conditionalqa"])
def test_every_real_page_makes_a_valid_tree(name: str) -> None:
    pages = _pages(name)
    assert pages
    for page in pages:
        html = page["html"] if "html" in page else "\n".join(page["html_lines"])
        tree = build_tree(page["title"], parse_blocks("html", html))
        assert tree_problems(tree.nodes, tree.text) == [], page["doc_id"]
        assert tree.content_count > 0, page["doc_id"]
        assert any(n.kind == "structure" for n in tree.nodes[1:]), page["doc_id"]
