"""Published reranker folders: what one holds, loading it, finding the newest."""

from __future__ import annotations

import json
from pathlib import Path

from rag_assets.core.index.reranking.lancedb_reranker import PassageReranker
from rag_assets.core.index.reranking.scorers import BiEncoderScorer, CrossEncoderScorer, load_cross_encoder
from rag_assets.core.quiet_loading import quiet_model_loading

RERANKER_RECORD = "reranker.json"
RERANKER_PREFIX = "rr-"


def is_passage_reranker(folder: Path) -> bool:
    record = Path(folder) / RERANKER_RECORD
    return record.is_file() and json.loads(record.read_text()).get("kind") == "passage-reranker"


def reranker_record(folder: Path) -> dict:
    return json.loads((Path(folder) / RERANKER_RECORD).read_text())


def load_passage_reranker(folder: Path, *, device: str = "cpu", weight: float | None = None) -> PassageReranker:
    """The reranker published in `folder`, with its calibrated fusion weight (or `weight`)."""
    folder = Path(folder)
    if not is_passage_reranker(folder):
        raise FileNotFoundError(f"{folder} holds no passage reranker ({RERANKER_RECORD} with kind 'passage-reranker')")
    record = reranker_record(folder)
    max_length = int(record["settings"]["max_length"])
    # folders published before the bi-encoder existed record no "model": they hold a cross-encoder
    if record.get("model", "cross-encoder") == "cross-encoder":
        scorer = CrossEncoderScorer(load_cross_encoder(folder, device=device, max_length=max_length))
    else:
        from sentence_transformers import SentenceTransformer

        with quiet_model_loading():
            model = SentenceTransformer(str(folder), device=device, local_files_only=True)
        model.max_seq_length = max_length
        scorer = BiEncoderScorer(model)
    return PassageReranker(
        scorer,
        weight=float(record["weight"]) if weight is None else weight,
        depth=int(record["depth"]),
        reranker_id=record.get("adapter_id", folder.name),
    )


def latest_reranker(root: Path, collection: str | None = None) -> Path | None:
    """The newest reranker folder under `root` (of `collection`, when given), or None."""
    if not root.is_dir():
        return None
    found = [
        f
        for f in root.iterdir()
        if f.is_dir()
        and is_passage_reranker(f)
        and (collection is None or reranker_record(f).get("collection") == collection)
    ]
    return max(found, key=lambda f: (f / RERANKER_RECORD).stat().st_mtime) if found else None
