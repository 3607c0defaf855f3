"""ConTReGen: tree-structured query decomposition, retrieval per leaf, bottom-up synthesis.

1. Decomposition, top-down: each node of level < `tree_depth` is split into `tree_branching`
   facet sub-questions (the paper's depth is 2). ONE engine call per level, for every node of
   every question at that level. An output the parser rejects leaves that node undecomposed: it
   becomes a leaf with its own query (status `fallback`), counted.
2. Retrieval: every leaf retrieves its own `top_k` passages (any retrieval mode).
3. Leaf summaries: ONE call for all leaves of all questions; each says what its passages tell
   about its sub-question, or "Nothing relevant." (filtered: it does not reach its parent). An
   empty or unusable summary falls back to the leaf's first passage, cut (counted).
4. Parent synthesis, bottom-up: ONE call per level for every internal node below the root, over
   its relevant children's findings; irrelevant detail is dropped at each level.
5. The root answers: the reader (ONE call for all questions) reads the root's children's findings
   as numbered evidence, `[n] sub-question` over its finding.

Engine calls per question: at most 2 * tree_depth + 1, whatever the number of questions. The
whole tree (queries, statuses, raw decompositions, every leaf's passages with exact spans, every
summary and synthesis) is the answer's `structure`. The citations are the passages of the leaves
whose findings reached the root.

`run_contregen` reads as the list of these stages; each stage is one function that builds its
chats, makes its one batched call (`StageRunner.run`) and records the parsed outputs on the tree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rag_assets.core.answering.citations import passage_citations
from rag_assets.core.answering.generation.parsers import parse_finding, parse_subqueries
from rag_assets.core.answering.generation.prompts import (
    NOTHING_RELEVANT,
    SUBQUERY_MAX_CHARS,
    decompose_messages,
    decompose_regex,
    summary_messages,
    synthesis_messages,
)
from rag_assets.core.answering.generation.stages import StageRunner, clip_words
from rag_assets.core.answering.reader_prompts import number_blocks, reader_messages, reader_style
from rag_assets.core.answering.types import AnswerOutcome, Citation, Retrieve, StrategySpec
from rag_assets.core.corpus.tree import TreeNode
from rag_assets.core.engines.base import BatchClock, Generation, LLMEngine
from rag_assets.core.index.retrieval import SearchHit

LEAF_PASSAGE_WORDS = 120  # each passage's words inside a leaf-summary prompt (the input limit)
FALLBACK_WORDS = 40  # a leaf whose summary is unusable passes on its first passage, cut to this


@dataclass(slots=True)
class QueryNode:
    query: str
    level: int
    status: str = "leaf"  # decomposed | leaf | fallback (decomposition rejected: a leaf after all)
    raw: str = ""  # the decomposition output, as generated
    children: list[QueryNode] = field(default_factory=list)
    hits: list[SearchHit] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)
    finding: str = ""  # a leaf's summary or an internal node's synthesis ('' when irrelevant)
    finding_status: str = ""  # ok | irrelevant | no-evidence | fallback | filtered

    @property
    def relevant(self) -> bool:
        return bool(self.finding)

    def walk(self):
        yield self
        for child in self.children:
            yield from child.walk()


@dataclass(frozen=True, slots=True)
class QuestionNode:
    """A node of one question's tree, with the index of that question: a stage batches the
    nodes of every question in one call, and each chat's tokens and counts go to its question."""

    question: int
    node: QueryNode


@dataclass(frozen=True, slots=True)
class TreeBatch:
    """What every stage of one `run_contregen` call shares."""

    spec: StrategySpec
    stages: StageRunner  # one engine call per stage; tokens, calls and stage names per question
    trees: Mapping[str, Sequence[TreeNode]]  # the documents' trees (citations' exact spans)
    counts: list[dict[str, int]]  # per question: the fallbacks and invalid lines of the answer's structure


@dataclass(frozen=True, slots=True)
class AnsweredTree:
    """One question at the end: its tree, the evidence the reader saw and the reader's answer."""

    question: str
    root: QueryNode
    evidence: str
    answer: Generation


def citation_dict(cite: Citation) -> dict:
    return {
        "doc_id": cite.doc_id,
        "node_id": cite.node_id,
        "heading_path": list(cite.heading_path),
        "span": [cite.span_start, cite.span_end],
        "text": cite.text,
    }


def hit_dict(hit: SearchHit, citations: Sequence[Citation]) -> dict:
    return {
        "passage_id": hit.passage_id,
        "doc_id": hit.doc_id,
        "heading_path": list(hit.heading_path),
        "citations": [citation_dict(c) for c in citations],
    }


def _node_dict(node: QueryNode, trees: Mapping[str, Sequence[TreeNode]]) -> dict:
    out: dict = {"query": node.query, "level": node.level, "status": node.status}
    if node.raw:
        out["raw"] = node.raw
    out["finding"] = node.finding
    out["finding_status"] = node.finding_status
    if not node.children:
        out["passages"] = [hit_dict(h, passage_citations([h], trees)) for h in node.hits]
    out["children"] = [_node_dict(c, trees) for c in node.children]
    return out


def _findings_block(children: Sequence[QueryNode]) -> str:
    return number_blocks([((c.query,), c.finding) for c in children if c.relevant])


def run_contregen(
    questions: Sequence[str],
    spec: StrategySpec,
    *,
    retrieve: Retrieve,
    trees: Mapping[str, Sequence[TreeNode]],
    engine: LLMEngine,
    reader: LLMEngine,
) -> list[AnswerOutcome]:
    """The five stages in order, each one batched call for all questions (module docstring)."""
    clock = BatchClock(engine, reader)  # started first: the seconds include retrieval
    counts = [
        {"decomposition_invalid_lines": 0, "decomposition_fallbacks": 0, "summary_fallbacks": 0, "filtered": 0}
        for _ in questions
    ]
    batch = TreeBatch(spec, StageRunner(engine, len(questions)), trees, counts)
    roots = [QueryNode(q, 0) for q in questions]
    decompose(batch, roots)
    summarise_leaves(batch, retrieve_for_leaves(batch, roots, retrieve))
    # deepest level first: a parent synthesises its children's findings once they exist
    for level in range(spec.tree_depth - 1, 0, -1):
        synthesise_level(batch, roots, level)
    count_filtered(batch, roots)
    evidences = [root_evidence(root) for root in roots]
    answers = read_root_findings(batch, questions, evidences, reader)
    seconds = clock.seconds_per_question(len(questions))
    return [
        tree_outcome(batch, q, AnsweredTree(question, root, evidence, answer), seconds)
        for q, (question, root, evidence, answer) in enumerate(zip(questions, roots, evidences, answers))
    ]


def decompose(batch: TreeBatch, roots: Sequence[QueryNode]) -> None:
    """1. Top-down: one call per level, for the nodes of every question that level produced."""
    frontier = [QuestionNode(q, root) for q, root in enumerate(roots)]
    for level in range(batch.spec.tree_depth):
        frontier = decompose_level(batch, frontier, level)


def decompose_level(batch: TreeBatch, frontier: Sequence[QuestionNode], level: int) -> list[QuestionNode]:
    """Split every node of `frontier` (all at `level`) into sub-questions; the new children, the
    next level's frontier. A rejected decomposition leaves its node a leaf (status `fallback`)."""
    branching = batch.spec.tree_branching
    generations = batch.stages.run(
        f"decompose@{level + 1}",
        [(item.question, decompose_messages(item.node.query, branching)) for item in frontier],
        max_new_tokens=branching * (SUBQUERY_MAX_CHARS // 4 + 6),
        regex=decompose_regex(branching),
    )
    children: list[QuestionNode] = []
    for item, generation in zip(frontier, generations):
        node, counts = item.node, batch.counts[item.question]
        parsed = parse_subqueries(generation.text, node.query, branching)
        node.raw = generation.text
        counts["decomposition_invalid_lines"] += parsed.invalid
        if parsed.fallback:
            node.status = "fallback"
            counts["decomposition_fallbacks"] += 1
            continue
        node.status = "decomposed"
        node.children = [QueryNode(sub, level + 1) for sub in parsed.subqueries]
        children += [QuestionNode(item.question, child) for child in node.children]
    return children


def retrieve_for_leaves(batch: TreeBatch, roots: Sequence[QueryNode], retrieve: Retrieve) -> list[QuestionNode]:
    """2. Every leaf (a decomposition fallback included) retrieves its own passages; the leaves
    that found any, to summarise. One without passages has no finding (`no-evidence`)."""
    spec = batch.spec
    to_summarise = []
    for q, root in enumerate(roots):
        for leaf in (node for node in root.walk() if not node.children):
            leaf.hits = list(retrieve(leaf.query, spec.retrieval_mode, spec.top_k))[: spec.top_k] if spec.top_k else []
            leaf.citations = passage_citations(leaf.hits, batch.trees)
            if leaf.hits:
                to_summarise.append(QuestionNode(q, leaf))
            else:
                leaf.finding_status = "no-evidence"
    return to_summarise


def summarise_leaves(batch: TreeBatch, leaves: Sequence[QuestionNode]) -> None:
    """3. One call for every leaf of every question: what its passages say about its sub-question."""
    generations = batch.stages.run(
        "summarise",
        [
            (
                item.question,
                summary_messages(
                    item.node.query,
                    number_blocks([(h.heading_path, clip_words(h.text, LEAF_PASSAGE_WORDS)) for h in item.node.hits]),
                ),
            )
            for item in leaves
        ],
        max_new_tokens=batch.spec.stage_max_new_tokens,
    )
    for item, generation in zip(leaves, generations):
        # an unusable summary passes on the leaf's first passage, cut
        record_finding(batch, item, generation.text, fallback=clip_words(item.node.hits[0].text, FALLBACK_WORDS))


def synthesise_level(batch: TreeBatch, roots: Sequence[QueryNode], level: int) -> None:
    """4. One call for every internal node at `level` of every question, over its relevant
    children's findings. A node whose children are all irrelevant is `filtered`, not asked."""
    to_synthesise = []
    for q, root in enumerate(roots):
        for node in root.walk():
            if node.level != level or not node.children:
                continue
            if any(c.relevant for c in node.children):
                to_synthesise.append(QuestionNode(q, node))
            else:
                node.finding_status = "filtered"  # every child irrelevant: nothing to synthesise
    generations = batch.stages.run(
        f"synthesise@{level}",
        [
            (item.question, synthesis_messages(item.node.query, _findings_block(item.node.children)))
            for item in to_synthesise
        ],
        max_new_tokens=batch.spec.stage_max_new_tokens,
    )
    for item, generation in zip(to_synthesise, generations):
        # an unusable synthesis passes its children's findings on, joined
        record_finding(
            batch, item, generation.text, fallback=" ".join(c.finding for c in item.node.children if c.relevant)
        )


def record_finding(batch: TreeBatch, item: QuestionNode, text: str, *, fallback: str) -> None:
    """A summary's or synthesis's output on its node: the finding (`ok`), nothing (`irrelevant`),
    or, when the parser rejects it, the `fallback` finding instead (`fallback`, counted)."""
    node, parsed = item.node, parse_finding(text)
    if parsed.invalid:
        node.finding, node.finding_status = fallback, "fallback"
        batch.counts[item.question]["summary_fallbacks"] += 1
    elif parsed.irrelevant:
        node.finding_status = "irrelevant"
    else:
        node.finding, node.finding_status = parsed.text, "ok"


def count_filtered(batch: TreeBatch, roots: Sequence[QueryNode]) -> None:
    """Every node below the root whose finding did not reach its parent."""
    for q, root in enumerate(roots):
        batch.counts[q]["filtered"] = sum(1 for n in root.walk() if n is not root and not n.relevant)


def root_evidence(root: QueryNode) -> str:
    """What the reader sees: the root's children's findings (a root leaf: its own summary)."""
    if root.children:
        return _findings_block(root.children)
    return number_blocks([((root.query,), root.finding)]) if root.relevant else ""


def read_root_findings(
    batch: TreeBatch, questions: Sequence[str], evidences: Sequence[str], reader: LLMEngine
) -> list[Generation]:
    """5. The reader: one call for all questions. Its tokens are the reader's, not the stages'."""
    style = reader_style(batch.spec.answer_style)
    return batch.stages.run(
        "answer",
        [(q, reader_messages(question, evidences[q], style.name)) for q, question in enumerate(questions)],
        max_new_tokens=batch.spec.reader_max_new_tokens or style.max_new_tokens,
        engine=reader,
        charge_tokens=False,
    )


def tree_outcome(batch: TreeBatch, q: int, answered: AnsweredTree, seconds: float) -> AnswerOutcome:
    """Question `q`'s outcome: the answer, cited by the leaves that reached the root, its tree."""
    stages, root = batch.stages, answered.root
    hits = [h for node in root.walk() for h in node.hits]
    structure = {
        "strategy": "contregen",
        "tree_depth": batch.spec.tree_depth,
        "tree_branching": batch.spec.tree_branching,
        "counts": batch.counts[q],
        "stages": stages.stages[q],
        "tree": _node_dict(root, batch.trees),
    }
    return AnswerOutcome(
        question=answered.question,
        answer=answered.answer.text,
        evidence=answered.evidence,
        evidence_words=len(answered.evidence.split()),
        citations=contributing_citations(root),
        passage_ids=list(dict.fromkeys(h.passage_id for h in hits)),
        retrieved_doc_ids=list(dict.fromkeys(h.doc_id for h in hits)),
        router_prompt_tokens=stages.prompt_tokens[q],
        router_output_tokens=stages.output_tokens[q],
        reader_prompt_tokens=answered.answer.prompt_tokens,
        reader_output_tokens=answered.answer.output_tokens,
        engine_calls=stages.calls[q],
        seconds=seconds,
        expelled=batch.counts[q]["decomposition_invalid_lines"],
        refused_docs=0,
        structure=structure,
    )


def contributing_citations(root: QueryNode) -> list[Citation]:
    """The citations of the leaves whose findings reached the root, each span once, in order."""
    cited: list[Citation] = []
    seen: set[tuple[str, int, int, int]] = set()
    for leaf in _contributing(root):
        for cite in leaf.citations:
            key = (cite.doc_id, cite.node_id, cite.span_start, cite.span_end)
            if key not in seen:
                seen.add(key)
                cited.append(cite)
    return cited


def _contributing(node: QueryNode) -> list[QueryNode]:
    """The leaves whose findings reached the root (every node on the way relevant)."""
    if not node.children:
        return [node] if node.relevant else []
    if node.level > 0 and not node.relevant:
        return []
    return [leaf for child in node.children for leaf in _contributing(child)]


__all__ = ["NOTHING_RELEVANT", "QueryNode", "run_contregen"]
