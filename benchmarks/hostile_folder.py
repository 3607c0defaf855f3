"""Does a hostile folder index in the time its good files need? Two real `rag index` runs in the
same run of this script, each in a fresh Dagster instance and data folder:

(a) the good Markdown documents of the reliability drill alone;
(b) the same good documents plus a hostile set: the drill's hostile entries, a Markdown file of
    20,000 headings (benchmarks/heading_flood.py), a UTF-16 text file with a BOM, a .docx zip bomb
    (a few MB expanding to 1 GiB), a .docx of 100 nested tables, a .docx declaring entities (a
    "billion laughs" DTD) and a PDF of 2,001 blank pages (over the 2,000-page cap).

    .venv/bin/python -m benchmarks.hostile_folder [--good 30] [--keep DIR]

Prints for each folder the wall time of `rag index`, the peak RSS of the rag process (and its
children), documents indexed / rejected (with the reasons from `rejected_documents`), passages and
the seconds of each step from the command's own output; then the ratios hostile / good. The word
cap is raised to 100,000 (the flood file has 80,000 words) so the flood reaches the tree and
passage caps; `over-the-cap.txt` has 100,001 words.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from benchmarks.heading_flood import flood
from benchmarks.reliability_drill import account, index_command, write_good, write_hostile
from tests.integration.test_security import write_zip_bomb
from tests.unit.test_docx_limits import paragraphs, word_file

WORD_CAP = 100_000

# Runs the command, then reports its wall time and the peak RSS of its largest process: this small
# launcher's only children are the measured ones, so RUSAGE_CHILDREN is theirs alone.
LAUNCHER = """
import json, resource, subprocess, sys, time
started = time.monotonic()
run = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print(json.dumps({"seconds": time.monotonic() - started, "rc": run.returncode, "out": run.stdout + run.stderr,
                  "peak_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""


def nested_tables(depth: int) -> bytes:
    cell = paragraphs(1)
    for _ in range(depth):
        cell = f"<w:tbl><w:tr><w:tc>{cell}</w:tc></w:tr></w:tbl>"
    return word_file(cell)


def billion_laughs(levels: int = 9) -> bytes:
    entities = '<!ENTITY lol0 "lol">' + "".join(
        f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, levels + 1)
    )
    return word_file(paragraphs(1, f"&lol{levels};"), head=f'<?xml version="1.0"?><!DOCTYPE lolz [{entities}]>')


def blank_pdf(pages: int) -> bytes:
    import pypdfium2

    document = pypdfium2.PdfDocument.new()
    for _ in range(pages):
        document.new_page(200, 200)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def write_extra_hostile(folder: Path) -> dict[str, str]:
    """The hostile files beyond the drill's; returns {uri: what it is}."""
    files = {
        "flood.md": flood(20_000).encode(),
        "utf16-bom.txt": ("Kettle care\n\nDescale the kettle every month. Café crème.\n" * 20).encode("utf-16"),
        "nested-tables.docx": nested_tables(100),
        "entities.docx": billion_laughs(),
        "pages-2001.pdf": blank_pdf(2_001),
    }
    for name, data in files.items():
        (folder / name).write_bytes(data)
    write_zip_bomb(folder / "bomb.docx", expanded_mib=1024)
    return {str(folder / name): name for name in [*files, "bomb.docx"]}


def index_folder(work: Path, entries_of: Callable[[Path], dict[str, str]]) -> dict:
    """The corpus written by `entries_of(work / "corpus")`, a fresh instance and data folder in
    `work`, and one measured `rag index -c drill`."""
    entries = entries_of(work / "corpus")
    env, command = index_command(work, WORD_CAP)
    launched = subprocess.run([sys.executable, "-c", LAUNCHER, *command], env=env, capture_output=True, text=True)
    measured = json.loads(launched.stdout.strip().splitlines()[-1])
    measured["entries"] = len(entries)
    measured["tally"] = account(work / "data", entries) if measured["rc"] == 0 else None
    return measured


def report(name: str, run: dict) -> None:
    print(f"== {name}: {run['entries']} entries")
    print(f"rag index: {run['seconds']:.1f} s wall, peak RSS {run['peak_mib']:.0f} MiB, exit {run['rc']}")
    for line in run["out"].splitlines():
        if re.search(r"\d+\.\d s\b", line):
            print(f"  | {line.strip()}")
    if run["tally"] is None:
        print(run["out"][-3000:])
        return
    tally = run["tally"]
    print(f"indexed {len(tally['indexed'])}, rejected {len(tally['rejected'])}, lost {len(tally['lost'])}")
    for what, reason in tally["rejected"]:
        print(f"  - {what}: {reason}")
    print(f"passages {tally['passages']} (index rows {tally['index_rows']}, stores agree: {tally['stores_agree']})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--good", type=int, default=30, help="good documents in each folder")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it (default: a temporary one)")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="rag-hostile-"))
    good = index_folder(work / "good", lambda folder: write_good(folder, args.good))
    hostile = index_folder(
        work / "hostile",
        lambda folder: {
            **write_good(folder, args.good),
            **write_hostile(folder, WORD_CAP),
            **write_extra_hostile(folder),
        },
    )
    report("good folder", good)
    report("good + hostile folder", hostile)
    print(
        f"ratio hostile / good: wall {hostile['seconds'] / good['seconds']:.2f}x, "
        f"peak RSS {hostile['peak_mib'] / good['peak_mib']:.2f}x"
        + (
            f", passages {hostile['tally']['passages'] / good['tally']['passages']:.2f}x"
            if good["tally"] and hostile["tally"]
            else ""
        )
    )
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if good["rc"] == hostile["rc"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
