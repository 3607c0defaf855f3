"""Screenshots for the README: the asset lineage graph and the evaluation report's asset page,
taken by headless Chromium from a real `dagster-webserver` on 127.0.0.1, and the service's audit
page after a question asked through it (`rag serve`, driven by Playwright as the browser test
drives it; the answer is stored with source `service`).

    python docs/ui_shots.py [--home DAGSTER_HOME] [--out docs] [--no-audit]

The webserver reads the instance in `--home` (default: $DAGSTER_HOME, else the project's
dagster_home), so materialize first (`make run`) for pictures with content. Each PNG is written
atomically and must stay under the size limit (they are committed).
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.integration.test_webserver import graphql, wait_for_code_location  # noqa: E402  (the same readiness probe)

MAX_BYTES = 300_000
WINDOW = (1400, 860)
SHOTS = {
    # the lineage through document_trees: every stage downstream of it, and the side tables
    # (the global view starts with its groups collapsed)
    "ui-lineage.png": "/assets/document_trees?view=lineage&lineageScope=neighbors&lineageDepth=12",
    # the headline table and plots of the latest evaluation (filled in by `_evaluation_path`)
    "ui-evaluation.png": "/assets/evaluation_report",
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find_chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise SystemExit("error: no Chromium found: apt-get install -y chromium (make ui-shots installs it)")


def _evaluation_path(port: int) -> str:
    """The evaluation asset's page on its newest materialized partition, if any."""
    query = (
        '{ assetNodes(assetKeys: [{path: ["evaluation_report"]}]) { assetMaterializations(limit: 1) { partition } } }'
    )
    nodes = graphql(port, query)["assetNodes"]
    found = nodes[0]["assetMaterializations"] if nodes else []
    if not found:
        print(
            "note: evaluation_report was never materialized in this instance; its page will be empty", file=sys.stderr
        )
        return SHOTS["ui-evaluation.png"]
    return f"/assets/evaluation_report?partition={found[0]['partition']}"


def screenshot(chromium: str, url: str, target: Path, wait_ms: int) -> None:
    """One headless Chromium screenshot, written atomically; fails if it is missing or too large."""
    with tempfile.TemporaryDirectory() as tmp:
        shot = Path(tmp) / "shot.png"
        subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                f"--user-data-dir={tmp}/profile",
                f"--window-size={WINDOW[0]},{WINDOW[1]}",
                f"--virtual-time-budget={wait_ms}",
                f"--screenshot={shot}",
                url,
            ],
            check=True,
            capture_output=True,
            timeout=300,
        )
        if not shot.is_file():
            raise SystemExit(f"error: Chromium wrote no screenshot of {url}")
        size = publish(shot, target)
    print(f"{target} ({size // 1000} kB) <- {url}")


def publish(shot: Path, target: Path) -> int:
    """`shot` copied to `target` atomically, after checking it is under the size limit; its size."""
    size = shot.stat().st_size
    if size > MAX_BYTES:
        raise SystemExit(f"error: {target.name} is {size} bytes, over the {MAX_BYTES} limit")
    partial = target.with_name(target.name + ".partial")
    shutil.copyfile(shot, partial)
    partial.replace(target)
    return size


def audit_shot(chromium: str, home: Path, target: Path, question: str) -> None:
    """The audit page: `question` asked with rdr2 through the page, its first citation opened."""
    from playwright.sync_api import expect, sync_playwright

    from tests.integration.served_project import running_service

    data = Path(os.environ.get("RAG_DATA_DIR") or home / "data")
    with running_service({"DAGSTER_HOME": str(home), "RAG_DATA_DIR": str(data)}) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"], headless=True)
        try:
            page = browser.new_page(viewport={"width": WINDOW[0], "height": WINDOW[1]})
            page.goto(url)
            expect(page.locator("#status")).to_have_text("ready", timeout=300_000)
            page.fill("#question", question)
            page.click("#ask-button")
            citation = page.locator("#citations a.citation").first
            citation.wait_for(timeout=900_000)
            citation.click()
            page.locator("#doc-tree mark.cited-span").first.wait_for(timeout=60_000)
            page.evaluate("window.scrollTo(0, 0)")  # the question, the answer and the versions on top
            with tempfile.TemporaryDirectory() as tmp:
                shot = Path(tmp) / "shot.jpg"  # a page of text: as PNG it is over the size limit
                page.screenshot(path=str(shot), type="jpeg", quality=60)
                size = publish(shot, target)
        finally:
            browser.close()
    print(f"{target} ({size // 1000} kB) <- {url}, asked {question!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=Path(os.environ.get("DAGSTER_HOME") or ROOT / "dagster_home"))
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    parser.add_argument("--wait-ms", type=int, default=20_000, help="virtual time the page gets to render")
    parser.add_argument("--no-audit", action="store_true", help="skip the service's audit page")
    parser.add_argument("--question", default="What does the with statement do?", help="asked for the audit page")
    args = parser.parse_args()
    chromium = find_chromium()
    args.out.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "DAGSTER_HOME": str(args.home.resolve()),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    port = _free_port()
    webserver = str(Path(sys.executable).with_name("dagster-webserver"))
    server = subprocess.Popen(
        [webserver, "-h", "127.0.0.1", "-p", str(port), "-w", str(ROOT / "workspace.yaml")],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        started = time.monotonic()
        wait_for_code_location(port, server)
        print(f"webserver ready on 127.0.0.1:{port} after {time.monotonic() - started:.0f} s")
        paths = {**SHOTS, "ui-evaluation.png": _evaluation_path(port)}
        for name, path in paths.items():
            screenshot(chromium, f"http://127.0.0.1:{port}{path}", args.out / name, args.wait_ms)
    finally:
        server.terminate()
        server.wait(timeout=60)
    if not args.no_audit:
        audit_shot(chromium, args.home.resolve(), args.out / "ui-audit.jpg", args.question)


if __name__ == "__main__":
    main()
