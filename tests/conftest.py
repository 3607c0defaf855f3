"""Shared fixtures: a tiny corpus in every supported format, written to tmp_path by the tests."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATASETS = REPO_ROOT.parent / "shared" / "datasets"

MARKDOWN_DOC = """\
# Kettle manual

Read this manual before first use.

## Filling

Open the lid and fill with water:

- at least 0.5 litres
- at most 1.7 litres
  - the MAX mark is inside

## Boiling

Press the switch. The light turns on.

| setting | temperature |
|---|---|
| green tea | 80 C |
| black tea | 100 C |
"""

HTML_DOC = """\
<html><head><title>Garden pond</title></head><body>
<h1>Garden pond</h1>
<p>A pond needs care in every season.</p>
<h2>Spring</h2>
<p>Clean the filter:</p>
<ul><li>rinse the sponge</li><li>check the pump</li></ul>
<h2>Winter</h2>
<p>Keep a hole in the ice so gases escape.</p>
</body></html>
"""

TEXT_DOC = """\
The "pass" statement
********************

"pass" is a null operation; nothing happens when it executes.

Uses
====

It is useful as a placeholder when a statement is required
syntactically, but no code needs to be executed, for example:

   def f(arg): pass    # a function that does nothing (yet)
"""

MANUAL = {
    "section_0": {
        "title": "Getting started",
        "html": ["<h2>Getting started</h2>", "<p>Charge the battery first.</p>"],
        "section_hierarchy": "section_0",
    },
    "section_1": {
        "title": "Battery",
        "html": [
            "<h3>Battery</h3>",
            "<p>Use only the supplied charger.</p>",
            "<ul><li>Plug in the cable.</li><li>Wait for the green light.</li></ul>",
        ],
        "section_hierarchy": "section_0>section_1",
    },
    "section_2": {
        "title": "Settings",
        "html": ["<h2>Settings</h2>", "<p>Open Settings from the Apps screen.</p>"],
        "section_hierarchy": "section_2",
    },
}

PAGES = [
    {
        "doc_id": "p1",
        "title": "Lighthouses",
        "html": "<H1> Lighthouses </H1> <P> A lighthouse is a tower that emits light . </P> <H2> History </H2> <P> The Pharos of Alexandria was built around 280 BC . </P>",
    },
    {
        "doc_id": "p2",
        "title": "Tide",
        "html_lines": [
            "<h1>Overview</h1>",
            "<p>Tides are the rise and fall of sea levels.</p>",
            "<li>two high tides a day</li>",
        ],
    },
]


class FixedScorer:
    """A passage reranker's model whose scores are a fixed function of the text: where a test is
    about what the pipeline does with the model's order, not about a trained model."""

    model_kind = "bi-encoder"

    def __init__(self, score) -> None:
        self.score = score

    def scores(self, query: str, texts) -> list[float]:
        return [float(self.score(t)) for t in texts]


def write_corpus(folder: Path) -> Path:
    """A collection folder with one document per supported format (6 documents, 5 files)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kettle.md").write_text(MARKDOWN_DOC, encoding="utf-8")
    (folder / "pond.html").write_text(HTML_DOC, encoding="utf-8")
    (folder / "pass.txt").write_text(TEXT_DOC, encoding="utf-8")
    (folder / "phone.json").write_text(json.dumps(MANUAL), encoding="utf-8")
    (folder / "pages.jsonl").write_text("\n".join(json.dumps(p) for p in PAGES) + "\n", encoding="utf-8")
    return folder


@pytest.fixture
def corpus_dir(tmp_path: Path) -> Path:
    return write_corpus(tmp_path / "corpus")


@pytest.fixture
def shared_datasets() -> Path:
    if not SHARED_DATASETS.is_dir():
        pytest.skip(f"the real evaluation datasets are not at {SHARED_DATASETS} (a fresh clone has none)")
    return SHARED_DATASETS


@pytest.fixture(scope="session")
def smollm2_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The packaged SmolLM2-135M-Instruct GGUF converted once per test session."""
    from rag_assets.core.engines.base_model import ensure_hf_checkpoint

    return ensure_hf_checkpoint(tmp_path_factory.mktemp("models"))


# The tiny corpus's questions: three train questions (routing data, the routers) and two test
# questions (what `answers` evaluates).
TINY_QUESTIONS = [
    {"qid": "t1", "question": "How hot should the water be for green tea?", "answers": ["80 C"], "split": "train"},
    {
        "qid": "t2",
        "question": "How much water at most goes into the kettle?",
        "answers": ["1.7 litres"],
        "split": "train",
    },
    {"qid": "t3", "question": "What is the pass statement?", "answers": ["null operation"], "split": "train"},
    {
        "qid": "e1",
        "question": "What should stay open in the pond ice in winter?",
        "answers": ["a hole"],
        "split": "test",
    },
    {
        "qid": "e2",
        "question": "Which charger should be used for the battery?",
        "answers": ["the supplied charger"],
        "section_path": ["Getting started", "Battery"],
        "split": "test",
    },
]


def tiny_project(
    tmp_path: Path, corpus_dir: Path, checkpoint: Path, questions_jsonl: str, *, llm_batch_size: int = 16
) -> dict:
    """A one-collection project ("tiny": the conftest corpus + `questions_jsonl`) with every
    resource real and on tmp paths: DuckDB file, LanceDB folder, packaged embedder, SmolLM2."""
    import dagster as dg
    from dagster_duckdb import DuckDBResource

    from rag_assets.defs.partitions import register_collections
    from resources.embedder import EmbedderResource
    from resources.llm import BaseModelResource, LLMResource
    from resources.sources import SourcesResource
    from resources.vectors import VectorStoreResource

    questions = tmp_path / "questions.jsonl"
    questions.write_text(questions_jsonl, encoding="utf-8")
    collections = tmp_path / "collections.yaml"
    collections.write_text(f"collections:\n  - name: tiny\n    path: {corpus_dir}\n    questions: {questions}\n")
    instance = dg.DagsterInstance.ephemeral()
    register_collections(instance, ["tiny"])
    base_model = BaseModelResource(model_path=str(checkpoint))
    return {
        "instance": instance,
        "db": tmp_path / "catalogue.duckdb",
        "resources": {
            "catalogue": DuckDBResource(database=str(tmp_path / "catalogue.duckdb")),
            "sources": SourcesResource(collections_file=str(collections)),
            "embedder": EmbedderResource(progress=False),
            "vectors": VectorStoreResource(uri=str(tmp_path / "lancedb")),
            "base_model": base_model,
            "llm": LLMResource(base_model=base_model, batch_size=llm_batch_size),
        },
    }


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tier is the folder: tests/unit are fast (no models, no services), tests/integration
    start real models, services and Dagster runs; `-m unit` runs the developer's loop."""
    for item in items:
        tier = Path(str(item.fspath)).parent.name
        if tier in ("unit", "integration"):
            item.add_marker(getattr(pytest.mark, tier))
