"""The views routers are scored on: every evaluation question's routing views (its top documents
as the router sees them, and their expansion views), built by the code that builds the training
views (`build_routing_samples`, with routing_subtrees' knobs) and labelled by the gold-derived
oracle teacher, whatever teacher the routers learnt from.

Why the evaluation questions (dev + test) and not the routing validation fold: the fold is a fifth
of the train questions, a handful of questions on a real set (nq_wiki: 9 views), too few to tell
one router from another; the dev + test questions are many more, and no router trains on them
(routing_subtrees reads the train split). Why the oracle: it labels from the gold answers,
evidence or section, so every router kind is judged against the same truth, not against the
teacher one of them imitated."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.corpus.tree import TreeNode
from rag_assets.core.index.retrieval import SearchHit
from rag_assets.core.routing.curation import curate, has_gold
from rag_assets.core.routing.metrics import RoutingGold
from rag_assets.core.routing.samples import RoutingSample, build_routing_samples

# The questions no router trains on: the same splits `evidence_evaluation` evaluates by default.
EVALUATION_SPLITS = ("dev", "test")


@dataclass(frozen=True, slots=True)
class ViewKnobs:
    """How views are built: routing_subtrees' knobs, so evaluation views look like training views."""

    top_docs: int
    passages_per_query: int
    expansion_views: int
    token_budget: int


def resolve_knobs(
    given: Mapping[str, int | None], recorded: Mapping[str, int], defaults: Mapping[str, int]
) -> tuple[ViewKnobs, dict[str, str]]:
    """Each knob from `given` (a config value, None: not given), else `recorded` (what
    routing_subtrees last built its views with: `routing_view_settings`), else `defaults`
    (RoutingDataConfig's); and where each came from ("config", "routing_subtrees" or "default")."""
    values: dict[str, int] = {}
    sources: dict[str, str] = {}
    for name in ViewKnobs.__dataclass_fields__:
        for source, value in (("config", given.get(name)), ("routing_subtrees", recorded.get(name))):
            if value is not None:
                values[name], sources[name] = value, source
                break
        else:
            values[name], sources[name] = defaults[name], "default"
    return ViewKnobs(**values), sources


def views_title(views: int, questions: int, dev_test: bool, llm_views: int | None = None) -> str:
    """What a router table's views are, and how many: "Router on all 114 dev+test views (19
    questions)", or the validation fold's when the collection has no dev/test questions."""
    if dev_test:
        title = f"Router on all {views} dev+test views ({questions} questions)"
    elif questions:
        title = f"Router on the validation fold ({views} views of {questions} train questions)"
    else:  # rows written before the question count was recorded
        title = f"Router on the validation fold ({views} views)"
    if llm_views is not None and llm_views < views:
        title += f"; the LLM kinds on the first {llm_views}"
    return title


@dataclass(slots=True)
class EvaluationViews:
    views: list[tuple[RoutingSample, RoutingGold]]  # by subtree id, each with its oracle label
    split_of: dict[str, str]  # qid -> split, of the questions with at least one view
    without_gold: list[str] = field(default_factory=list)  # qids the oracle cannot label: left out

    @property
    def questions(self) -> int:
        return len(self.split_of)


def split_names(split: str) -> list[str]:
    """The names in a comma-joined split list, as the configs take them: "train, dev" -> train, dev."""
    return [s.strip() for s in split.split(",") if s.strip()]


def trained_evaluation_splits(training_split: str) -> list[str]:
    """The evaluation splits the routers' training views were built from (`routing_subtrees`'
    split): scoring the routers on those would score them on their training questions."""
    return [s for s in EVALUATION_SPLITS if s in split_names(training_split)]


def evaluation_views(
    questions: Sequence[Question],
    retrieve: Callable[[str, int], Sequence[SearchHit]],
    trees: dict[str, Sequence[TreeNode]],
    knobs: ViewKnobs,
    count_tokens: Callable[[str], int],
) -> EvaluationViews:
    """The routing views of `questions` (retrieve(query, k) finds their passages), each with its
    oracle label. Questions without gold (no answer, evidence or section, and not marked
    unanswerable) are left out: the oracle would label all their views 'refuse', a label nobody
    gave. Views are ordered by subtree id (a content hash), so the first few cover many questions."""
    labelled = [q for q in questions if has_gold(q)]
    samples = build_routing_samples(
        labelled,
        lambda query: retrieve(query, knobs.passages_per_query),
        trees,
        top_docs=knobs.top_docs,
        expansion_views=knobs.expansion_views,
        token_budget=knobs.token_budget,
        count_tokens=count_tokens,
    )
    samples.sort(key=lambda s: s.subtree_id)
    by_qid = {q.qid: q for q in labelled}
    labels = curate(samples, by_qid, trees, "oracle").labels
    views = [
        (sample, RoutingGold(frozenset(label.answer_ids), frozenset(label.expand_ids)))
        for sample, label in zip(samples, labels)
    ]
    return EvaluationViews(
        views,
        {qid: by_qid[qid].split for qid in sorted({s.qid for s in samples})},
        [q.qid for q in questions if not has_gold(q)],
    )
