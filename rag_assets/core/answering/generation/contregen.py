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
from rag_assets.core.answering.readers import number_blocks, reader_messages, reader_style
from rag_assets.core.answering.types import AnswerOutcome, Citation, Retrieve, StrategySpec
from rag_assets.core.corpus.tree import TreeNode
from rag_assets.core.engines.base import BatchClock, LLMEngine
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


def run_contregen(  # noqa: C901 — the method's stages in order (decompose, retrieve, summarise, synthesise, read), each one batched call
    questions: Sequence[str],
    spec: StrategySpec,
    *,
    retrieve: Retrieve,
    trees: Mapping[str, Sequence[TreeNode]],
    engine: LLMEngine,
    reader: LLMEngine,
) -> list[AnswerOutcome]:
    clock = BatchClock(engine, reader)
    stages = StageRunner(engine, len(questions))
    counts = {"decomposition_invalid_lines": 0, "decomposition_fallbacks": 0, "summary_fallbacks": 0, "filtered": 0}
    roots = [QueryNode(q, 0) for q in questions]
    per_question: list[dict] = [dict(counts) for _ in questions]

    # 1. decomposition, top-down: one call per level
    frontier = [(q, root) for q, root in enumerate(roots)]
    for level in range(spec.tree_depth):
        generations = stages.run(
            f"decompose@{level + 1}",
            [(q, decompose_messages(node.query, spec.tree_branching)) for q, node in frontier],
            max_new_tokens=spec.tree_branching * (SUBQUERY_MAX_CHARS // 4 + 6),
            regex=decompose_regex(spec.tree_branching),
        )
        below = []
        for (q, node), generation in zip(frontier, generations):
            parsed = parse_subqueries(generation.text, node.query, spec.tree_branching)
            node.raw = generation.text
            per_question[q]["decomposition_invalid_lines"] += parsed.invalid
            if parsed.fallback:
                node.status = "fallback"
                per_question[q]["decomposition_fallbacks"] += 1
                continue
            node.status = "decomposed"
            node.children = [QueryNode(sub, level + 1) for sub in parsed.subqueries]
            below += [(q, child) for child in node.children]
        frontier = below

    # 2. retrieval per leaf, 3. leaf summaries: one call for every leaf of every question
    leaves = [(q, node) for q, root in enumerate(roots) for node in root.walk() if not node.children]
    summarise = []
    for q, leaf in leaves:
        leaf.hits = list(retrieve(leaf.query, spec.retrieval_mode, spec.top_k))[: spec.top_k] if spec.top_k else []
        leaf.citations = passage_citations(leaf.hits, trees)
        if leaf.hits:
            summarise.append((q, leaf))
        else:
            leaf.finding_status = "no-evidence"
    generations = stages.run(
        "summarise",
        [
            (
                q,
                summary_messages(
                    leaf.query,
                    number_blocks([(h.heading_path, clip_words(h.text, LEAF_PASSAGE_WORDS)) for h in leaf.hits]),
                ),
            )
            for q, leaf in summarise
        ],
        max_new_tokens=spec.stage_max_new_tokens,
    )
    for (q, leaf), generation in zip(summarise, generations):
        parsed = parse_finding(generation.text)
        if parsed.invalid:
            leaf.finding, leaf.finding_status = clip_words(leaf.hits[0].text, FALLBACK_WORDS), "fallback"
            per_question[q]["summary_fallbacks"] += 1
        elif parsed.irrelevant:
            leaf.finding_status = "irrelevant"
        else:
            leaf.finding, leaf.finding_status = parsed.text, "ok"

    # 4. bottom-up synthesis below the root: one call per level, deepest first
    for level in range(spec.tree_depth - 1, 0, -1):
        internal = [(q, n) for q, root in enumerate(roots) for n in root.walk() if n.level == level and n.children]
        todo = []
        for q, node in internal:
            if any(c.relevant for c in node.children):
                todo.append((q, node))
            else:
                node.finding_status = "filtered"  # every child irrelevant: nothing to synthesise
        generations = stages.run(
            f"synthesise@{level}",
            [(q, synthesis_messages(node.query, _findings_block(node.children))) for q, node in todo],
            max_new_tokens=spec.stage_max_new_tokens,
        )
        for (q, node), generation in zip(todo, generations):
            parsed = parse_finding(generation.text)
            if parsed.invalid:  # an unusable synthesis passes its children's findings on, joined
                node.finding = " ".join(c.finding for c in node.children if c.relevant)
                node.finding_status = "fallback"
                per_question[q]["summary_fallbacks"] += 1
            elif parsed.irrelevant:
                node.finding_status = "irrelevant"
            else:
                node.finding, node.finding_status = parsed.text, "ok"
    for q, root in enumerate(roots):
        per_question[q]["filtered"] = sum(1 for n in root.walk() if n is not root and not n.relevant)

    # 5. the root answers from its children's findings (a root leaf: from its own summary)
    evidences = []
    for root in roots:
        if root.children:
            evidences.append(_findings_block(root.children))
        else:
            evidences.append(number_blocks([((root.query,), root.finding)]) if root.relevant else "")
    style = reader_style(spec.answer_style)
    answers = stages.run(
        "answer",
        [(q, reader_messages(question, evidences[q], style.name)) for q, question in enumerate(questions)],
        max_new_tokens=spec.reader_max_new_tokens or style.max_new_tokens,
        engine=reader,
        charge_tokens=False,
    )
    seconds = clock.seconds_per_question(len(questions))

    outcomes = []
    for q, (question, root, answer) in enumerate(zip(questions, roots, answers)):
        cited: list[Citation] = []
        seen: set[tuple[str, int, int, int]] = set()
        for leaf in _contributing(root):
            for cite in leaf.citations:
                key = (cite.doc_id, cite.node_id, cite.span_start, cite.span_end)
                if key not in seen:
                    seen.add(key)
                    cited.append(cite)
        hits = [h for node in root.walk() for h in node.hits]
        structure = {
            "strategy": "contregen",
            "tree_depth": spec.tree_depth,
            "tree_branching": spec.tree_branching,
            "counts": per_question[q],
            "stages": stages.stages[q],
            "tree": _node_dict(root, trees),
        }
        outcomes.append(
            AnswerOutcome(
                question=question,
                answer=answer.text,
                evidence=evidences[q],
                evidence_words=len(evidences[q].split()),
                citations=cited,
                passage_ids=list(dict.fromkeys(h.passage_id for h in hits)),
                retrieved_doc_ids=list(dict.fromkeys(h.doc_id for h in hits)),
                router_prompt_tokens=stages.prompt_tokens[q],
                router_output_tokens=stages.output_tokens[q],
                reader_prompt_tokens=answer.prompt_tokens,
                reader_output_tokens=answer.output_tokens,
                engine_calls=stages.calls[q],
                seconds=seconds,
                expelled=per_question[q]["decomposition_invalid_lines"],
                refused_docs=0,
                structure=structure,
            )
        )
    return outcomes


def _contributing(node: QueryNode) -> list[QueryNode]:
    """The leaves whose findings reached the root (every node on the way relevant)."""
    if not node.children:
        return [node] if node.relevant else []
    if node.level > 0 and not node.relevant:
        return []
    return [leaf for child in node.children for leaf in _contributing(child)]


__all__ = ["NOTHING_RELEVANT", "QueryNode", "run_contregen"]
