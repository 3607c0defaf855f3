"""Answers a person can trust, on a small collection of one's own whose Markdown carries inline
HTML: asked through the service's stream, `rag ask` with the service and the audit page (headless
Chromium) of a real `rag serve`. No answer echoes its prompt; what is streamed and printed is what
is stored; citations list the node the answer rests on first; the extractive form answers with the
document's sentence; the audit page marks the open citation, keeps the versions in view, opens a
past answer at the citation it rests on and renders the Markdown of node text."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from rag_assets.core.answering.echo import find_echoes
from rag_assets.core.answering.extractive import EXTRACTIVE_NOTE
from rag_assets.core.answering.verdict import VERDICT_NOTE, VERDICTS
from tests.conftest import REPO_ROOT
from tests.integration.served_project import materialize, post, project_env, running_service

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]

KETTLE_GUIDE = """# Kettle safety guide

<div class="note">The kettle boils water.</div>

## Cleaning

<p>Descale the kettle <b>every month</b> with white vinegar.</p>

**Never** immerse the kettle base in water; unplug it with `the switch` first.

## Filling

Fill the kettle with at most <em>1.7 litres</em> of water.
"""
ESPRESSO_NOTE = """# Espresso notes

<span>Espresso is made by forcing hot water through ground coffee.</span>

## Pressure

A good espresso needs about <strong>9 bar</strong> of pressure.

## Grind

Use a fine grind, finer than for filter coffee.
"""
# reST as the Python reference writes it: the Markdown parser keeps no markup, a text file keeps it all
DECORATORS = """Decorators
==========

Relaxed decorator grammar came with **PEP 614**: any valid expression such as ``buttons[0].clicked.connect`` works.
"""
DESCALE = "How often should I descale the kettle?"
PRESSURE = "How much pressure does espresso need?"


def write_own_collection(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kettle.md").write_text(KETTLE_GUIDE, encoding="utf-8")
    (folder / "espresso.md").write_text(ESPRESSO_NOTE, encoding="utf-8")
    (folder / "decorators.txt").write_text(DECORATORS, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, smollm2_checkpoint: Path) -> dict[str, str]:
    env = project_env(tmp_path_factory.mktemp("own"), smollm2_checkpoint, write_own_collection)
    materialize(env)
    return env


def stream(url: str, body: dict) -> tuple[str, dict]:
    """(the text streamed, the answer event) of one ask through the service's stream."""
    from rag_assets.serving.client import parse_events

    request = urllib.request.Request(
        f"{url}/ask/stream", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=600) as response:
        events = list(parse_events(line.decode() for line in response))
    assert events[-1][0] == "answer", events[-1]
    return "".join(data["text"] for event, data in events if event == "token"), events[-1][1]


def rag(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rag_assets.cli", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO_ROOT,
    )


def check_citations(result: dict) -> None:
    """The citations the answer rests on come first, flagged; the rest is evidence also given."""
    supporting = result["supporting"]
    assert 0 <= supporting <= len(result["citations"])
    assert [c["supports"] for c in result["citations"]] == [i < supporting for i in range(len(result["citations"]))]
    assert result["answer"]["supporting"] == supporting


@pytest.mark.timeout(2400)
def test_streamed_printed_and_stored_answers_are_one_string_and_never_echo(project: dict[str, str]) -> None:
    with running_service(project) as url:
        for question in (DESCALE, PRESSURE):
            for strategy in ("rdr2", "rag-hybrid"):
                streamed, result = stream(url, {"question": question, "strategy": strategy})
                stored = result["answer"]["answer"]
                assert streamed == stored, (question, strategy)
                assert find_echoes(stored) == [], (question, strategy, stored)
                # no answer_policy measured here: the default form, a quote of the evidence
                assert result["answer"]["answer_form"] == "extractive", stored
                # no trained encoder router in this project: rdr2 routes by similarity and says so
                routed = {"rdr2": "rdr2-similarity", "rag-hybrid": "rag-hybrid"}[strategy]
                assert result["answer"]["strategy"] == f"{routed}-extractive"
                check_citations(result)

        status, extractive = post(f"{url}/ask", {"question": DESCALE, "strategy": "rag-hybrid", "form": "extractive"})
        assert status == 200, extractive
        assert "every month" in extractive["answer"]["answer"]
        assert (
            extractive["form_note"] == EXTRACTIVE_NOTE and extractive["answer"]["strategy"] == "rag-hybrid-extractive"
        )
        first = extractive["citations"][0]
        assert first["text"] == "Descale the kettle every month with white vinegar." and first["supports"]
        assert first["heading_path"] == ["Kettle safety guide", "Cleaning"]
        # a yes/no question: the quote starts with the reader's verdict, and the note says so
        body = {"question": "Should I descale the kettle every month?", "strategy": "rag-hybrid", "form": "extractive"}
        status, verdict = post(f"{url}/ask", body)
        assert status == 200 and verdict["form_note"] == VERDICT_NOTE, verdict
        said, quote = verdict["answer"]["answer"].split(". ", 1)
        assert said in VERDICTS and quote == "Descale the kettle every month with white vinegar."
        assert json.loads(verdict["answer"]["versions"])["verdict"] == said  # stored with the answer's lineage
        assert extractive["supporting"] == 1 and not any(c["supports"] for c in extractive["citations"][1:])
        status, refused = post(f"{url}/ask", {"question": DESCALE, "strategy": "no-retrieval", "form": "extractive"})
        assert status == 400 and "needs evidence" in refused["detail"]

        # `rag ask` with the service prints exactly the stored answer
        service_env = {**project, "RAG_SERVICE_URL": url}
        asked = rag(service_env, "ask", PRESSURE, "-s", "rag-hybrid")
        assert asked.returncode == 0, asked.stderr
        listed = json.loads(rag(service_env, "answers", "--source", "service", "--limit", "1", "--json").stdout)
        stored = listed[0]["answer"]
        assert asked.stdout.startswith(stored + "\n") and "the answer as stored" not in asked.stdout
        printed = rag(service_env, "ask", DESCALE, "-s", "rag-hybrid", "--form", "extractive")
        assert printed.returncode == 0, printed.stderr
        assert EXTRACTIVE_NOTE in printed.stdout and "evidence also given:" in printed.stdout
        assert printed.stdout.index("citations:") < printed.stdout.index("evidence also given:")


@pytest.mark.timeout(2400)
def test_the_audit_view_marks_the_open_citation_keeps_the_versions_and_renders_markdown(
    project: dict[str, str],
) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the dev extra)")
    if not Path(CHROMIUM).exists():
        pytest.skip("no system Chromium: cluster/install-packages.sh installs it (apt-get install chromium)")
    with running_service(project) as url, sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(url)
            sync_api.expect(page.locator("#status")).to_have_text("ready", timeout=120_000)
            page.select_option("#strategy", "rag-hybrid")
            page.select_option("#form", "extractive")
            page.fill("#question", DESCALE)
            page.click("#ask-button")
            page.locator("#citations a.citation").first.wait_for(timeout=600_000)
            assert "every month" in page.locator("#answer-text").inner_text()
            assert page.locator("#answer-form").inner_text() == EXTRACTIVE_NOTE
            assert page.locator("#citations li").count() == 1  # the sentence the answer is
            assert page.locator("#also-given li").count() >= 1 and page.locator("#also-title").is_visible()
            answer_id = page.locator("#answer-meta").get_attribute("data-answer-id")

            # the open citation is marked, in the answer and in the audit's list
            page.locator("#citations a.citation").first.click()
            page.locator("#doc-tree mark.cited-span").first.wait_for(timeout=60_000)
            sync_api.expect(page.locator('#citations a.citation[data-n="1"]')).to_have_class("citation open")
            sync_api.expect(page.locator("#audit-citations li.open")).to_have_attribute("data-source", "0")
            # the versions stay in view when another citation is opened: only the tree scrolls
            page.evaluate("window.scrollTo(0, 0)")
            versions_top = page.locator("#versions").bounding_box()["y"]
            page.locator('#audit-citations li[data-source="1"] a').click()
            sync_api.expect(page.locator("#audit-citations li.open")).to_have_attribute("data-source", "1")
            page.locator("#doc-tree mark.cited-span").first.wait_for(timeout=60_000)
            assert page.evaluate("window.scrollY") == 0
            assert page.locator("#versions").bounding_box()["y"] == versions_top
            # a past answer opens at the citation it rests on
            page.reload()
            sync_api.expect(page.locator("#status")).to_have_text("ready", timeout=120_000)
            page.locator(f'#history tr[data-answer="{answer_id}"] a').click()
            sync_api.expect(page.locator("#audit-id")).to_have_text(answer_id, timeout=60_000)
            opened = page.locator("#audit-citations li.open")
            sync_api.expect(opened).to_have_attribute("data-source", "0")
            assert "Cleaning" in opened.inner_text() and "evidence also given" not in opened.inner_text()
            # the tree highlights every cited span of the document; the one the answer rests on among them
            sync_api.expect(page.locator("#doc-tree mark.cited-span", has_text="every month")).to_have_count(
                1, timeout=60_000
            )

            # Markdown and code in node text read as text: no raw ** or backticks
            page.fill("#question", "What relaxed the decorator grammar?")
            page.select_option("#form", "extractive")
            page.click("#ask-button")
            sync_api.expect(page.locator("#answer-text")).to_contain_text("PEP 614", timeout=600_000)
            page.locator("#citations a.citation").first.click()
            tree = page.locator("#doc-tree")
            sync_api.expect(tree.locator("strong").first).to_have_text("PEP 614", timeout=60_000)
            assert tree.locator("code").first.inner_text() == "buttons[0].clicked.connect"
            assert "**" not in tree.inner_text() and "`" not in tree.inner_text()
        finally:
            browser.close()


SOURDOUGH = "How do I bake sourdough bread?"


@pytest.mark.timeout(2400)
def test_a_question_the_documents_do_not_answer_is_said_not_found(project: dict[str, str]) -> None:
    import duckdb

    from rag_assets.core.answering.no_answer import NOT_FOUND_ANSWER, RelevanceFloor
    from rag_assets.core.answering.policy.default_form import FormChoice
    from rag_assets.core.answering.published import ANSWER_POLICY_KIND
    from rag_assets.core.index.embedding import Embedder
    from rag_assets.core.store.published_models import PublishedModel, publish_models

    # A floor as `answer_policy` publishes it beside the default form (this collection has too few
    # validation questions to measure one): the packaged embedder scores "Descale the kettle every
    # month" near 0.8 for DESCALE and no sentence here near 0.4 for SOURDOUGH.
    floor = RelevanceFloor(0.4, Embedder(progress=False).model_id, 6)
    choice = FormChoice("extractive", 0, 0, 0, None, floor)
    form = PublishedModel(ANSWER_POLICY_KIND, "extractive", details=choice.details())
    with duckdb.connect(str(Path(project["RAG_DATA_DIR"]) / "catalogue.duckdb")) as con:
        publish_models(con, "tiny", [form], kinds=[ANSWER_POLICY_KIND])
    with running_service(project) as url:
        streamed, result = stream(url, {"question": SOURDOUGH, "strategy": "rdr2"})
        assert streamed == result["answer"]["answer"] == NOT_FOUND_ANSWER  # streamed whole, never taken back
        # none of its words occurs in the kettle, pond and tea pages: said so, by name
        assert result["form_note"] == (
            "not found: none of the words 'bake', 'sourdough', 'bread' occurs in the documents searched"
        ), result["form_note"]
        assert result["supporting"] == 0 and result["citations"]  # the evidence stays, as evidence also given
        assert not any(c["supports"] for c in result["citations"])
        recorded = json.loads(result["answer"]["versions"])["relevance"]
        assert recorded["not_found"] and recorded["best"] < recorded["floor"] == 0.4

        streamed, kept = stream(url, {"question": DESCALE, "strategy": "rdr2"})
        assert kept["answer"]["answer"] != NOT_FOUND_ANSWER and streamed == kept["answer"]["answer"]
        assert json.loads(kept["answer"]["versions"])["relevance"]["best"] >= 0.4
