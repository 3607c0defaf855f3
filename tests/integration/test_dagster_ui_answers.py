"""A served answer audited from the real Dagster UI, as a Dagster user does it: `rag index`, then
`rag ask` (its answer recorded on `served_answers` when the command exits), then
`dagster-webserver` and headless Chromium: the answer found by its id in the asset's partitions,
its lineage read there, its index run and its document's materialization reached by their links."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.integration.served_project import project_env
from tests.integration.test_browser import CHROMIUM, CHROMIUM_ARGS
from tests.integration.test_webserver import running_webserver

QUESTION = "How hot should the water be for green tea?"


def _shown(page, expected: str, timeout_s: float = 60) -> str:
    """The page's text once `expected` is in it or `timeout_s` has passed: the UI renders an
    asset's Markdown tables after their labels, so a label being visible is not enough."""
    deadline = time.monotonic() + timeout_s
    text = page.locator("body").inner_text()
    while expected not in text and time.monotonic() < deadline:
        page.wait_for_timeout(500)
        text = page.locator("body").inner_text()
    return text


def _rag(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "rag_assets.cli", *args],
        env=env,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


@pytest.mark.timeout(2400)
def test_a_served_answer_is_found_by_id_and_leads_to_its_run_and_document(
    tmp_path: Path, smollm2_checkpoint: Path
) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the dev extra)")
    if not Path(CHROMIUM).exists():
        pytest.skip("no system Chromium: cluster/install-packages.sh installs it (apt-get install chromium)")
    env = {
        **os.environ,
        **project_env(tmp_path, smollm2_checkpoint),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
    }
    indexed = _rag(env, "index")
    index_run = next(line.split()[1] for line in indexed.splitlines() if line.strip().startswith("run "))
    answer = json.loads(_rag(env, "ask", QUESTION, "--strategy", "rag", "-k", "1", "--json"))
    answer_id, cited = answer["answer_id"], answer["cited_doc_ids"][0]
    assert cited == "tiny/kettle.md"

    with running_webserver(env, tmp_path / "webserver.log") as port:
        url = f"http://127.0.0.1:{port}"
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            try:
                context = browser.new_context(viewport={"width": 1400, "height": 1400})
                page = context.new_page()
                # the answer, found by its id among the asset's partitions
                page.goto(f"{url}/assets/served_answers?view=partitions")
                search = page.get_by_placeholder("Filter by name…")
                search.wait_for(timeout=120_000)
                search.fill(answer_id[:6])
                page.get_by_text(answer_id, exact=True).first.click()
                sync_api.expect(page).to_have_url(f"{url}/assets/served_answers?view=partitions&partition={answer_id}")
                run_link = page.get_by_role("link", name=index_run)  # the full run id, as a link
                run_link.wait_for(timeout=60_000)
                # the Markdown tables (cited nodes, documents) render after the rest
                sync_api.expect(page.get_by_text("ingested by")).to_be_visible(timeout=60_000)
                sync_api.expect(page.get_by_text("heading path")).to_be_visible(timeout=60_000)
                node = answer["cited_node_ids"][0]
                shown = _shown(page, f"tiny/kettle.md\t{node}\t")
                for expected in (QUESTION, "rag-hybrid", "tiny/kettle.md", "index_tag", f"tiny-{index_run[:8]}"):
                    assert expected in shown, expected
                assert f"tiny/kettle.md\t{node}\t" in shown  # the cited-nodes table: document, node, span...

                # its index run
                run_link.click()
                sync_api.expect(page).to_have_url(f"{url}/runs/{index_run}")
                sync_api.expect(page.get_by_text("passage_index_job").first).to_be_visible(timeout=60_000)
                sync_api.expect(page.get_by_text("Success").first).to_be_visible(timeout=60_000)

                # its document: the source_documents materialization that ingested the cited version
                page.go_back()
                document_link = page.get_by_role("link", name="/assets/source_documents", exact=False)
                document_link.wait_for(timeout=60_000)
                with context.expect_page() as opened:
                    document_link.click()
                documents = opened.value
                sync_api.expect(documents.get_by_text("document_changes").first).to_be_visible(timeout=120_000)
                kettle_hash = json.loads(answer["versions"])["doc_hashes"]["tiny/kettle.md"]
                text = _shown(documents, f"tiny/kettle.md\tadded\t- → {kettle_hash[:12]}")
                assert f"Partition tiny materialized in run {index_run[:8]}" in text
                assert f"tiny/kettle.md\tadded\t- → {kettle_hash[:12]}" in text

                # column descriptions keep their <placeholders> in the UI
                page.goto(f"{url}/assets/passages")
                sync_api.expect(
                    page.get_by_text("Stable passage id: <doc_id>#<first node id>", exact=False)
                ).to_be_visible(timeout=120_000)
            finally:
                browser.close()
