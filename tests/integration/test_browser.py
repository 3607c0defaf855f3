"""The audit page in a real browser: headless Chromium (the system's, driven by Playwright; no
browser is downloaded) against a running `rag serve` over a tiny materialized project: ask,
watch the answer arrive, follow a citation, see the cited span highlighted in the document tree
with the versions behind the answer, and open the same audit from the list of past answers."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from tests.integration.served_project import materialize, project_env, running_service

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]


def served_answer_recorded(home: str, answer_id: str, limit_s: float = 60) -> bool:
    """Whether the instance at `home` gets the answer's `served_answers` materialization in time."""
    import dagster as dg

    from rag_assets.events.served_answers import SERVED_ANSWERS
    from rag_assets.events.upstream import latest_materialization

    deadline = time.monotonic() + limit_s
    with dg.DagsterInstance.from_config(home) as instance:
        while latest_materialization(instance, SERVED_ANSWERS, partition=answer_id) is None:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.5)
    return True


@pytest.mark.timeout(2400)
def test_ask_follow_a_citation_and_see_the_highlight(tmp_path: Path, smollm2_checkpoint: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the dev extra)")
    if not Path(CHROMIUM).exists():
        pytest.skip("no system Chromium: cluster/install-packages.sh installs it (apt-get install chromium)")
    env = project_env(tmp_path, smollm2_checkpoint)
    materialize(env)
    with running_service(env) as url, sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page()
            page.goto(url)
            sync_api.expect(page.locator("#status")).to_have_text("ready", timeout=120_000)
            assert page.locator("#collection").input_value() == "tiny"
            page.select_option("#strategy", "rag-hybrid")
            page.fill("#question", "How hot should the water be for green tea?")
            page.click("#ask-button")

            citation = page.locator("#citations a.citation").first
            citation.wait_for(timeout=600_000)
            assert page.locator("#answer-text").inner_text().strip()
            assert "kettle.md" in page.locator("#citations li").first.inner_text()
            answer_id = page.locator("#answer-meta").get_attribute("data-answer-id")
            citation.click()

            highlight = page.locator("#doc-tree .node.cited mark.cited-span").first
            highlight.wait_for(timeout=60_000)
            assert "80 C" in " ".join(page.locator("#doc-tree .node.cited").all_inner_texts())
            assert page.locator("#doc-title").inner_text().startswith("Kettle manual")
            assert "Kettle manual" in page.locator("#heading-path").inner_text()
            versions = page.locator("#versions").inner_text()
            assert "tag tiny-" in versions and "reader" in versions and "embedder" in versions
            assert "source tiny/kettle.md" in versions and "unchanged" in versions
            assert page.locator("#audit-changed").inner_text() == "every cited source is unchanged"
            start, end = (int(x) for x in highlight.get_attribute("data-span").split("-"))
            assert end > start and highlight.inner_text().strip()

            # the list of past answers opens the same audit view
            row = page.locator(f'#history tr[data-answer="{answer_id}"]')
            row.wait_for(timeout=60_000)
            assert "service" in row.inner_text()
            page.reload()
            sync_api.expect(page.locator("#status")).to_have_text("ready", timeout=120_000)
            page.select_option("#f-source", "service")
            page.click("#filters button")
            page.locator(f'#history tr[data-answer="{answer_id}"] a').click()
            sync_api.expect(page.locator("#audit-id")).to_have_text(answer_id, timeout=60_000)
            page.locator("#doc-tree mark.cited-span").first.wait_for(timeout=60_000)
            # the service recorded the answer as a Dagster event too (served_answers, a batch within seconds)
            assert served_answer_recorded(env["DAGSTER_HOME"], answer_id)
        finally:
            browser.close()
