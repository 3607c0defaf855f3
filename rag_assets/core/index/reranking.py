"""The passage reranker: the packaged MiniLM fine-tuned on the collection's questions, used through LanceDB.

No reranker weights ship in any package we install, so one is trained here, on (query, passage)
groups from the collection's own questions (train split) and synthetic questions about the
documents those questions ask about: one gold passage against hard negatives, the first-stage
hybrid candidates that are not gold. What it learns is partly a prior over documents: on the
e-manuals (near-identical manuals) the first stage finds the right section in the wrong manual,
and the labelled questions teach which manual users ask about. Two models
(`RerankerSettings.model`):

- `bi-encoder` (the default): the packaged sentence encoder fine-tuned contrastively on the groups
  (`core/training/contrastive.py`, the recipe the encoder router uses); a candidate's score is the cosine of
  the fine-tuned query and passage embeddings. It starts from a model that already ranks as well
  as the dense first stage, so a few dozen CPU steps move it from there.
- `cross-encoder`: a one-logit classification head on the packaged MiniLM (sentence-transformers'
  `CrossEncoder`) with a listwise softmax cross-entropy over each group. It starts from an
  untrained head: on the real sets it ranked the gold first on 15-50% of held-out questions where
  the first stage did on 65%, hence not the default.

A passage is gold for a question when it comes from the gold document (title, file name or doc
key) and, where the question has finer labels, lies under the gold section path, holds a gold
evidence line, or contains a gold short answer. Inverse-cloze synthetic questions have their
sentence taken out of the positive (as the encoder router does), so the model learns what a
passage is about rather than string matching.

At query time the reranker is a LanceDB `Reranker`, so hybrid + rerank is ONE LanceDB query:
the vector and full-text candidates are fused by reciprocal rank (as LanceDB's RRFReranker
does), the model scores the `depth` best of them, and its rank joins the fusion with a weight
calibrated on held-out questions (recall@5 of a gold passage);
`weight < 0` means the model's order alone. The calibration keeps a freshly trained model from
undoing a good first stage on a collection where it learnt little: the weight that was best on
held-out questions is the one used, and 0 (the first stage alone) is always a candidate.
"""

from __future__ import annotations

import copy
import json
import math
import random
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
from lancedb.rerankers import Reranker

from rag_assets.core.answer_metrics import normalize_answer
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.index.passages import Passage
from rag_assets.core.index.retrieval import SearchHit
from rag_assets.core.index.vector_index import search_text
from rag_assets.core.quiet_loading import quiet_model_loading
from rag_assets.core.training.contrastive import ContrastivePair, fine_tune_bi_encoder

RERANKER_RECORD = "reranker.json"
RERANKER_PREFIX = "rr-"
RRF_K = 60
# fusion weights tried on held-out questions; -1 = the cross-encoder's order alone
FUSION_GRID = (0.0, 0.5, 1.0, 2.0, 4.0, -1.0)
_TAG = re.compile(r"<[^>]+>")
_YES_NO = {"yes", "no"}


# One training group: the query, one gold passage and its hard negatives (search texts).
RerankGroup = ContrastivePair


@dataclass(slots=True)
class RerankerSettings:
    model: str = "bi-encoder"  # "bi-encoder" | "cross-encoder" (see the module doc)
    max_steps: int = 24  # optimizer steps (about 1-3 s each on 2 CPU cores)
    batch_size: int = 8  # groups per step (the bi-encoder's in-batch negatives grow with it)
    negatives: int = 3  # hard negatives per group
    learning_rate: float = 3e-5
    head_lr_multiplier: float = 50.0  # cross-encoder: the fresh classification head learns this much faster
    score_scale: float = 20.0  # cross-encoder: listwise softmax temperature 1/score_scale (see train_reranker)
    warmup_fraction: float = 0.1
    max_length: int = 160  # query + passage tokens
    candidates: int = 20  # first-stage hits a negative is drawn from
    depth: int = 30  # first-stage candidates the model re-scores at query time
    validation_fraction: float = 0.25  # of the labelled train questions, held out to calibrate the fusion
    max_validation: int = 24  # held-out questions scored at most
    # held-out questions wanted at least: a set with few labelled train questions (emanual holds
    # out 5) tops the slice up with held-out synthetic ones, so one question does not pick the weight
    min_validation: int = 20
    # synthetic questions from "labelled-documents" (the documents the labelled train questions ask
    # about, where users' questions concentrate; every document when there is no labelled question)
    # or from "all" documents (see train_collection_reranker)
    synthetic_scope: str = "labelled-documents"
    seed: int = 0

    # what the bi-encoder recipe (core/training/contrastive.py) reads: max_steps decides, small
    # collections take several passes
    epochs = 10**6

    @property
    def max_seq_length(self) -> int:
        return self.max_length


@dataclass(slots=True)
class RerankerTrainingResult:
    folder: Path
    reranker_id: str
    losses: list[float]
    steps: int
    seconds_per_step: float
    groups: int
    weight: float
    calibration: dict[str, float]  # fusion weight -> held-out recall@5
    calibrated_on: int  # held-out questions
    device: str
    details: dict = field(default_factory=dict)


# -- gold labels -------------------------------------------------------------------------------


def is_gold_document(question: Question, doc_id: str, title: str) -> bool:
    """The passage's document is the question's gold document: by title (nq_wiki, conditionalqa,
    synthetic questions), doc key (`<collection>/<key>`: the built-in reference) or file stem
    (`emanual/<manual>.json`)."""
    gold = question.gold_doc.strip()
    if not gold:
        return False
    if gold.casefold() == title.strip().casefold() or doc_id == gold:
        return True
    tail = doc_id.rsplit("/", 1)[-1]
    return tail == gold or tail.rsplit(".", 1)[0] == gold


def _under(heading_path: Sequence[str], section: Sequence[str]) -> bool:
    # heading_path[0] is the document title (the tree root); the sections follow
    path = [p.casefold() for p in heading_path[1 : 1 + len(section)]]
    return path == [s.casefold() for s in section]


def is_gold_hit(question: Question, doc_id: str, heading_path: Sequence[str]) -> bool:
    """What retrieval recall counts: a hit from the gold document (under the gold section, when
    the question has one, as for the e-manuals)."""
    if not is_gold_document(question, doc_id, heading_path[0] if heading_path else ""):
        return False
    return _under(heading_path, question.section_path) if question.section_path else True


def _clean(text: str) -> str:
    return " ".join(_TAG.sub(" ", text).split())


def is_gold_passage(question: Question, passage: Passage | SearchHit) -> bool:
    """Gold document, and the finest label the question has: section, evidence line, short answer
    (a stored passage or a search hit of one)."""
    title = passage.heading_path[0] if passage.heading_path else ""
    if not is_gold_document(question, passage.doc_id, title):
        return False
    if question.section_path:
        return _under(passage.heading_path, question.section_path)
    if question.evidences:
        text = _clean(passage.text)
        return any(_clean(e) and _clean(e) in text for e in question.evidences)
    answers = [a for a in question.answers if normalize_answer(a) and normalize_answer(a) not in _YES_NO]
    if answers:
        text = normalize_answer(passage.text)
        return any(normalize_answer(a) in text for a in answers)
    return True


def passage_text(passage: Passage) -> str:
    """What the reranker reads: the passage as the index stores it for search (heading path + text)."""
    return search_text(passage.heading_path, passage.text)


def _strip_query(text: str, query: str) -> str:
    return " ".join(text.replace(query, " ").split()) if len(query) > 20 and query in text else text


def rerank_groups(
    questions: Sequence[Question],
    passages: Sequence[Passage],
    candidates: Callable[[str], Sequence[str]],
    *,
    negatives: int = 3,
    seed: int = 0,
) -> list[RerankGroup]:
    """One group per question that has a gold passage: the first gold passage among its search
    candidates (else the first gold passage of the collection), against up to `negatives`
    non-gold candidates (topped up with random non-gold passages)."""
    rng = random.Random(seed)
    by_id = {p.passage_id: p for p in passages}
    groups: list[RerankGroup] = []
    for question in questions:
        gold = [p for p in passages if is_gold_passage(question, p)]
        if not gold or len(gold) == len(passages):
            continue
        gold_ids = {p.passage_id for p in gold}
        ranked = [by_id[i] for i in candidates(question.query) if i in by_id]
        positive = next((p for p in ranked if p.passage_id in gold_ids), gold[0])
        hard = [p for p in ranked if p.passage_id not in gold_ids][:negatives]
        while len(hard) < negatives:
            extra = rng.choice(passages)
            if extra.passage_id not in gold_ids and extra not in hard:
                hard.append(extra)
            elif len(passages) - len(gold_ids) <= len(hard):
                break
        if len(hard) < negatives:
            continue
        groups.append(
            RerankGroup(
                question.query,
                _strip_query(passage_text(positive), question.query),
                tuple(passage_text(p) for p in hard),
            )
        )
    return groups


def held_out(questions: Sequence[Question], fraction: float) -> tuple[list[Question], list[Question]]:
    """(train, held-out): a stable split by question id, so retraining never moves a question."""
    import hashlib

    train, kept = [], []
    for q in questions:
        bucket = int(hashlib.sha256(f"rerank:{q.qid}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
        (kept if bucket < fraction else train).append(q)
    return train, kept


# -- the LanceDB reranker ----------------------------------------------------------------------


def fuse(first_stage: Sequence[float], cross_scores: Sequence[float], weight: float) -> list[float]:
    """Relevance of each candidate: its first-stage RRF score plus `weight` / (K + cross-encoder
    rank); weight < 0 = the cross-encoder's score alone."""
    if weight < 0:
        return [float(s) for s in cross_scores]
    order = sorted(range(len(cross_scores)), key=lambda i: -cross_scores[i])
    rank = {i: r for r, i in enumerate(order, start=1)}
    return [float(f) + weight / (RRF_K + rank[i]) for i, f in enumerate(first_stage)]


class CrossEncoderScorer:
    """Scores (query, passage) pairs with a sentence-transformers `CrossEncoder`."""

    model_kind = "cross-encoder"

    def __init__(self, model) -> None:
        self.model = model

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        return [float(s) for s in self.model.predict([(query, t) for t in texts], batch_size=32)]


class BiEncoderScorer:
    """Cosine between the fine-tuned sentence encoder's query and passage embeddings. Passage
    embeddings are cached by text: the same candidates come back for many queries (held-out
    calibration, an evaluation's strategies), and the first stage's vectors in the index are the
    untrained model's, not these."""

    model_kind = "bi-encoder"

    def __init__(self, model, *, cache_size: int = 50_000) -> None:
        self.model = model
        self.cache_size = cache_size
        self._vectors: dict[str, np.ndarray] = {}

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(
            self.model.encode(list(texts), batch_size=32, normalize_embeddings=True, show_progress_bar=False),
            dtype=np.float32,
        )

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if len(self._vectors) + len(missing) > self.cache_size:
            self._vectors.clear()  # a bounded cache: a long-lived process must not grow without end
            missing = list(dict.fromkeys(texts))
        if missing:
            self._vectors.update(zip(missing, self._encode(missing)))
        q = self._encode([query])[0]
        return [float(q @ self._vectors[t]) for t in texts]


class PassageReranker(Reranker):
    """A LanceDB reranker running the trained model (`scorer`: a `BiEncoderScorer` or a
    `CrossEncoderScorer`; see the module doc)."""

    def __init__(
        self, scorer, *, weight: float = -1.0, depth: int = 30, column: str = "search_text", reranker_id: str = ""
    ) -> None:
        super().__init__("relevance")
        self.scorer = scorer
        self.weight = weight
        self.depth = depth
        self.column = column
        self.reranker_id = reranker_id
        self.first_stage_k: int | None = None  # each list's ranks that count in the first-stage fusion

    def with_first_stage(self, k: int) -> PassageReranker:
        """This reranker (same model and cache) with a first stage that fuses only each list's top
        `k`: the plain hybrid search of `k` results, though more candidates were fetched."""
        view = copy.copy(self)
        view.first_stage_k = k
        return view

    def __str__(self) -> str:
        return (
            f"PassageReranker({self.reranker_id or 'untitled'}, {self.scorer.model_kind}, "
            f"weight={self.weight}, depth={self.depth})"
        )

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        return self.scorer.scores(query, texts)

    def _rerank_ranked(self, query: str, table: pa.Table, first_stage: list[float]) -> pa.Table:
        """`table` rows with their first-stage scores: the top `depth` are re-scored and fused,
        the rest keep their first-stage order below them."""
        order = sorted(range(table.num_rows), key=lambda i: -first_stage[i])
        head, tail = order[: self.depth], order[self.depth :]
        texts = table.column(self.column).to_pylist()
        fused = fuse([first_stage[i] for i in head], self.scores(query, [texts[i] for i in head]), self.weight)
        ranked = [i for _, i in sorted(zip(fused, head), key=lambda t: -t[0])] + tail
        # relevance strictly decreasing along the final order, whatever the fused scale
        relevance = [float(len(ranked) - r) for r in range(len(ranked))]
        out = table.take(pa.array(ranked, pa.int64()))
        for name in ("_relevance_score", "_distance", "_score"):
            if name in out.column_names:
                out = out.drop_columns([name])
        return out.append_column("_relevance_score", pa.array(relevance, pa.float32()))

    def rerank_hybrid(self, query: str, vector_results: pa.Table, fts_results: pa.Table) -> pa.Table:
        rrf: dict[int, float] = defaultdict(float)
        for results in (vector_results, fts_results):
            for rank, row_id in enumerate(results["_rowid"].to_pylist() if results else [], start=1):
                if self.first_stage_k is None or rank <= self.first_stage_k:
                    rrf[row_id] += 1 / (RRF_K + rank)
        merged = self.merge_results(vector_results, fts_results)
        if merged.num_rows == 0:
            return self._handle_empty_results(merged)
        return self._rerank_ranked(query, merged, [rrf[i] for i in merged["_rowid"].to_pylist()])

    def _rerank_single(self, query: str, results: pa.Table) -> pa.Table:
        if results.num_rows == 0:
            return self._handle_empty_results(results)
        return self._rerank_ranked(query, results, [1 / (RRF_K + r) for r in range(1, results.num_rows + 1)])

    def rerank_vector(self, query: str, vector_results: pa.Table) -> pa.Table:
        return self._rerank_single(query, vector_results)

    def rerank_fts(self, query: str, fts_results: pa.Table) -> pa.Table:
        return self._rerank_single(query, fts_results)


# -- training ----------------------------------------------------------------------------------


def _cross_encoder(path: Path, *, device: str, max_length: int, num_labels: int | None = None):
    from sentence_transformers import CrossEncoder

    kwargs = {"num_labels": num_labels} if num_labels else {}
    with quiet_model_loading():  # the new classifier head is reported as missing: we train it
        return CrossEncoder(str(path), device=device, max_length=max_length, local_files_only=True, **kwargs)


def calibrate_fusion(
    reranker: PassageReranker,
    held: Sequence[tuple[str, Sequence[float], Sequence[str], Sequence[bool]]],
    k: int = 5,
) -> tuple[float, dict[str, float]]:
    """The fusion weight with the best held-out recall@k of a gold passage. Ties (frequent on a few
    held-out questions) go to the weight that ranks the gold higher (mean reciprocal rank within
    the candidates): a gold at rank 1 keeps its place where one at rank 5 falls off; then to the
    smaller weight, the one closest to the first stage. `held`: per question, (query, first-stage
    scores of its candidates in first-stage order, their texts, which are gold)."""
    scored = [(fs[: reranker.depth], reranker.scores(q, texts[: reranker.depth]), gold) for q, fs, texts, gold in held]
    table: dict[str, float] = {}
    reciprocal: dict[float, float] = {}
    for weight in FUSION_GRID:
        found, mrr = 0, 0.0
        for first, cross, gold in scored:
            fused = fuse(first, cross, weight)
            order = sorted(range(len(fused)), key=lambda i: -fused[i])
            found += any(gold[i] for i in order[:k])
            mrr += next((1 / rank for rank, i in enumerate(order, 1) if gold[i]), 0.0)
        table[str(weight)] = found / max(len(scored), 1)
        reciprocal[weight] = mrr / max(len(scored), 1)
    best = max(
        FUSION_GRID,
        key=lambda w: (table[str(w)], round(reciprocal[w], 9), -abs(w) if w >= 0 else -math.inf),
    )
    return best, table


RERANKER_MODELS = ("bi-encoder", "cross-encoder")
SYNTHETIC_SCOPES = ("labelled-documents", "all")


def _fine_tune_cross_encoder(
    base_model: Path,
    groups: Sequence[RerankGroup],
    settings: RerankerSettings,
    *,
    device: str,
    on_step: Callable[[int, int, float], None] | None,
    progress: bool,
):
    """The cross-encoder recipe: a one-logit head on the packaged MiniLM, listwise softmax over
    each group (gold first) -> (model, losses, steps, seconds per step)."""
    import torch

    from rag_assets.core.training.optimisation import optimise

    torch.manual_seed(settings.seed)
    rng = random.Random(settings.seed)
    model = _cross_encoder(base_model, device=device, max_length=settings.max_length, num_labels=1)
    total = max(settings.max_steps, 1)
    warmup = max(1, math.ceil(total * settings.warmup_fraction))
    # Why the loss used to stay at ln(1 + negatives): the score is `classifier(tanh(pooler(CLS)))`,
    # and the packaged checkpoint's BERT pooler was never trained (sentence-transformers pools by
    # mean; its bias is all zeros, its weights std 0.009), so the head reads features of ~0.07 per
    # dimension and the fresh head turned them into logits within +-0.03. Adam moves such logits by
    # about 0.01 a step, so in the few steps a CPU affords the gaps never reached the ~1 a listwise
    # loss needs, even while the gold passage already ranked first on most training groups. Hence:
    # the loss reads the logits times `score_scale` (a softmax temperature, as contrastive losses
    # use on cosines; only the order of the scores is used at query time), and the head starts at
    # zero so that the scale does not amplify random initial scores (step 1 is exactly ln(1 + n)).
    # The fresh head also learns `head_lr_multiplier` times faster than the encoder.
    head = [p for n, p in model.named_parameters() if "classifier" in n]
    body = [p for n, p in model.named_parameters() if "classifier" not in n]
    if not head:
        raise RuntimeError(f"{base_model}: the cross-encoder has no 'classifier' head parameters to train")
    with torch.no_grad():
        for param in head:
            param.zero_()
    optimizer = torch.optim.AdamW(
        [
            {"params": body, "lr": settings.learning_rate},
            {"params": head, "lr": settings.learning_rate * settings.head_lr_multiplier},
        ]
    )
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (total - s) / max(total - warmup, 1)))
    )
    width = settings.negatives + 1

    def epoch() -> list[list[RerankGroup]]:
        order = list(groups)
        rng.shuffle(order)
        return [order[i : i + settings.batch_size] for i in range(0, len(order), settings.batch_size)]

    def loss_of(batch: list[RerankGroup]):
        from sentence_transformers.util import batch_to_device

        pairs = [(g.query, text) for g in batch for text in (g.positive, *g.negatives[: settings.negatives])]
        features = batch_to_device(model.preprocess(pairs), model.device)
        logits = model(features)["scores"].view(len(batch), width).float() * settings.score_scale
        # listwise: the gold passage (column 0) against its group's negatives
        return torch.nn.functional.cross_entropy(
            logits, torch.zeros(len(batch), dtype=torch.long, device=logits.device)
        )

    losses, step, seconds = optimise(
        epoch, loss_of, model, optimizer, scheduler, total, desc="passage reranker", progress=progress, on_step=on_step
    )
    model.eval()
    return model, losses, step, seconds


def train_reranker(
    base_model: Path,
    groups: Sequence[RerankGroup],
    held: Sequence[tuple[str, Sequence[float], Sequence[str], Sequence[bool]]],
    output_root: Path,
    settings: RerankerSettings | None = None,
    *,
    device: str = "cpu",
    on_step: Callable[[int, int, float], None] | None = None,
    progress: bool = True,
    extra_record: Mapping[str, object] | None = None,
) -> RerankerTrainingResult:
    """Fine-tune the reranker (`settings.model`) on `groups`, calibrate the fusion on `held`,
    publish the folder."""
    from rag_assets.core.training.model_folders import publish_model_folder

    settings = settings or RerankerSettings()
    if settings.model not in RERANKER_MODELS:
        raise ValueError(f"reranker model {settings.model!r} is not one of {', '.join(RERANKER_MODELS)}")
    if settings.max_steps < 1:
        raise ValueError(f"reranker max_steps must be at least 1, got {settings.max_steps}")
    usable = [g for g in groups if len(g.negatives) >= settings.negatives > 0]
    if not usable:
        raise ValueError(
            f"no reranker training groups: no question has a gold passage and {settings.negatives} negatives"
        )
    if settings.model == "cross-encoder":
        model, losses, step, seconds = _fine_tune_cross_encoder(
            base_model, usable, settings, device=device, on_step=on_step, progress=progress
        )
        scorer = CrossEncoderScorer(model)
    else:
        run = fine_tune_bi_encoder(
            base_model, usable, settings, device=device, desc="passage reranker", progress=progress, on_step=on_step
        )
        model, losses, step, seconds = run.model, run.losses, run.steps, run.seconds_per_step
        scorer = BiEncoderScorer(model)
    reranker = PassageReranker(scorer, depth=settings.depth)
    weight, calibration = calibrate_fusion(reranker, held) if held else (-1.0, {})

    def write(staging: Path) -> dict:
        with quiet_model_loading():  # no "Writing model shards" bar in a run's log
            model.save(str(staging))
        return {
            "kind": "passage-reranker",
            "model": settings.model,
            "base_model": str(base_model),
            "settings": asdict(settings),
            "weight": weight,
            "depth": settings.depth,
            "calibration": calibration,
            "calibrated_on": len(held),
            "losses": losses,
            "steps": step,
            "groups": len(usable),
            "device": device,
            **dict(extra_record or {}),
        }

    folder, reranker_id = publish_model_folder(
        output_root,
        write,
        record=RERANKER_RECORD,
        prefix=RERANKER_PREFIX,
        identity={"weight": weight, "depth": settings.depth},
    )
    return RerankerTrainingResult(
        folder, reranker_id, losses, step, seconds, len(usable), weight, calibration, len(held), device
    )


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
        scorer = CrossEncoderScorer(_cross_encoder(folder, device=device, max_length=max_length))
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


def train_collection_reranker(
    base_model: Path,
    passages: Sequence[Passage],
    labelled: Sequence[Question],
    synthetic: Sequence[Question],
    hits: Callable[[str], Sequence],
    output_root: Path,
    settings: RerankerSettings | None = None,
    *,
    device: str = "cpu",
    on_step: Callable[[int, int, float], None] | None = None,
    extra_record: Mapping[str, object] | None = None,
) -> RerankerTrainingResult | None:
    """The whole recipe for one collection (the `passage_reranker` asset and the benchmark share
    it): the synthetic questions kept to `settings.synthetic_scope`, a stable slice of the
    labelled train questions held out (topped up with held-out synthetic ones to
    `min_validation`), groups from the rest with hard negatives from `hits(query)` (first-stage `SearchHit`s),
    training, and the fusion calibrated on the held-out questions. None when no group can be made."""
    settings = settings or RerankerSettings()
    if settings.synthetic_scope not in SYNTHETIC_SCOPES:
        raise ValueError(f"synthetic_scope must be one of {SYNTHETIC_SCOPES}, not {settings.synthetic_scope!r}")
    synthetic = list(synthetic)
    offered = len(synthetic)
    # documents as (doc id, title); questions name their gold by title, doc key or file stem
    documents = {(p.doc_id, p.heading_path[0] if p.heading_path else "") for p in passages}
    asked_about = [d for d in documents if any(is_gold_document(q, *d) for q in labelled)]
    if settings.synthetic_scope == "labelled-documents" and asked_about:
        # A synthetic question about a document no user asks about teaches the wrong prior: on the
        # e-manuals (33 near-identical manuals, every question about the Galaxy S10) it rewards
        # the same section of another manual, and the reranker learnt nothing there.
        synthetic = [q for q in synthetic if any(is_gold_document(q, *d) for d in asked_about)]
    train, held = held_out(labelled, settings.validation_fraction)
    held = held[: settings.max_validation]
    synthetic_kept, synthetic_held = held_out(synthetic, settings.validation_fraction)
    wanted = min(settings.min_validation, settings.max_validation) - len(held)
    topped_up = synthetic_held[: max(wanted, 0)]
    held = [*held, *topped_up]
    # the synthetic questions not needed for calibration still train
    synthetic = [*synthetic_kept, *synthetic_held[max(wanted, 0) :]]
    groups = rerank_groups(
        [*train, *synthetic], passages, lambda q: [h.passage_id for h in hits(q)], negatives=settings.negatives
    )
    if not groups:
        return None
    held_rows = []
    for question in held:
        found = list(hits(question.query))
        held_rows.append(
            (
                question.query,
                [h.score for h in found],
                [search_text(h.heading_path, h.text) for h in found],
                [is_gold_passage(question, h) for h in found],
            )
        )
    synthetic_queries = {q.query for q in synthetic}
    result = train_reranker(
        base_model,
        groups,
        held_rows,
        output_root,
        settings,
        device=device,
        on_step=on_step,
        progress=False,
        extra_record=extra_record,
    )
    result.details["groups_synthetic"] = sum(g.query in synthetic_queries for g in groups)
    result.details["calibrated_on_synthetic"] = len(topped_up)
    result.details["synthetic_out_of_scope"] = offered - len(synthetic_kept) - len(synthetic_held)
    return result
