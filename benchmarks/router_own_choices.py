"""The trained encoder router's own choices (no budget fill) against rag-hybrid, from a
materialized catalogue (nothing is trained or written).

    DAGSTER_HOME=/tmp/h RAG_DATA_DIR=/tmp/h/data RAG_COLLECTIONS=collections.datasets.yaml \\
        .venv/bin/python -m benchmarks.router_own_choices -c conditionalqa

The own-choice rule (`core/routing/own_choices.py`: answer every shown node within a margin of
the question's best node) is chosen as training chooses it, on the validation fold's real
questions at `--word-target` of rag-hybrid's words (`choose_own_choices`; a router trained since
the rule exists has it in router.json, and the one recorded there is used unless `--rechoose`
asks for this code's rule, as a router trained now would choose it), then the dev + test
questions are measured: the router with the rule (budget filled and own choices) against the
same router answering by its calibrated threshold, in the evidence table with intervals and
paired differences against rag-hybrid.

`--ideas` also measures the other selection policies tried, each family's setting chosen on the
validation questions as the own-choice rule is (`pick_own_choices`: the best metric within the word
target, then the fewest words) and measured on dev + test: the threshold and answers per view
chosen on evidence (`t..+k..`), whole sections (`+sec`: an answered node brings its section's shown
content), whole lists and tables (`+run`: an answered list item or table row brings its shown
siblings of the same kind, so a row is read with the rows that give it its meaning), no refusal
(`+fb`: a document with nothing answered expands its best heading, or in the last round answers its
best node), the best-scored nodes up to W words (`@W`), and the budget fill at a share of
rag-hybrid's words (`fill@share`: the ranking's ceiling at that length, not an own choice), and the
own-choice rule on content nodes scored by the collection's trained passage reranker (`rr<mix>`:
`mix` of the reranker's cosine of (question, node in its heading context), the rest the encoder's).
The reranker trains on the train questions the validation questions are drawn from, so the
validation figures of that family flatter it; read its dev + test row.

`--misses` prints, for each dev + test question the own choices miss, the question's best node
score and each node holding a gold answer: whether a view showed it, and its score.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Sequence

from benchmarks.common import catalogue_in, session_models
from rag_assets.core.corpus.blocks import BlockKind
from rag_assets.core.routing.action_format import format_actions
from rag_assets.core.routing.navigation import RouteRequest, RouterReply, RoutingKnobs
from rag_assets.core.routing.own_choices import OwnChoiceTrial, pick_own_choices
from rag_assets.core.routing.scoring_router import ScoringRouter
from rag_assets.core.routing.teachers import pick_best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-c", "--collection", required=True)
    parser.add_argument("--word-target", type=float, default=0.6, help="own choices' share of rag-hybrid's words")
    parser.add_argument("--ideas", action="store_true", help="also measure the other selection policies tried")
    parser.add_argument("--misses", action="store_true", help="show where the own choices miss a gold answer")
    parser.add_argument(
        "--rechoose", action="store_true",
        help="choose the own-choice rule by this code's rule on the validation questions, not router.json's",
    )  # fmt: skip
    args = parser.parse_args()
    run(args.collection, args.word_target, args.ideas, args.misses, args.rechoose)


def run(collection: str, target: float, ideas: bool, misses: bool = False, rechoose: bool = False) -> None:
    from rag_assets.core.answering.policy.catalogue import DEFAULT_SETTINGS, strategy_specs
    from rag_assets.core.answering.policy.measure import validation_questions
    from rag_assets.core.answering.policy.sessions import open_session
    from rag_assets.core.evaluation.evidence import evidence_table, measure_evidence, summarise_evidence
    from rag_assets.core.evaluation.held_out_evidence import held_out_evidence, remembered
    from rag_assets.core.routing.own_choices import choose_own_choices
    from rag_assets.core.store.connections import catalogue_connection
    from rag_assets.core.store.question_table import load_question_rows
    from rag_assets.core.tables import markdown_table

    with catalogue_connection(catalogue_in(), read_only=True) as con:
        validation = validation_questions(con, collection)
        evaluation = load_question_rows(con, collection, "dev,test")
        session = open_session(con, collection, session_models())
    encoder = session.published.routers.get("encoder")
    if encoder is None:
        raise SystemExit(f"{collection}: no trained encoder router is published in this catalogue")
    if {q.qid for q in validation} & {q.qid for q in evaluation}:
        raise SystemExit("validation questions among the evaluation questions: not held out")
    retrieve = remembered(session.retrieve)  # every router and policy routes the same searches
    trees = session.trees
    specs = strategy_specs(DEFAULT_SETTINGS, "short", None)
    baseline = specs["rag-hybrid"]
    routed = dataclasses.replace(specs["rdr2"], router="encoder", evidence_budget_from=None)
    trained = session.router("encoder")
    threshold = trained.with_own_choices(None)
    held_out = held_out_evidence(validation, baseline=baseline, routed=routed, retrieve=retrieve, trees=trees)
    if held_out is None:
        raise SystemExit(f"{collection}: no validation question with a gold label")
    print(f"{collection}: {len(validation)} validation questions, {len(evaluation)} dev+test; encoder "
          f"{encoder.model_id} (answer >= {trained.thresholds.answer}, max {trained.thresholds.max_answers}, "
          f"section weight {trained.section_weight}, fill {trained.fill_order}); validation rag-hybrid "
          f"{held_out.metric} {held_out.baseline:.3f}", flush=True)  # fmt: skip
    own_rule = None if rechoose else trained.own_choices
    if own_rule is None:
        calibration = choose_own_choices(threshold, held_out, word_target=target)
        for t in calibration.trials:
            print(f"  validation own choices weight {t.section_weight:g} margin {t.margin:g}: "
                  f"{held_out.metric} {t.evidence:.3f} at {t.words_share:.0%}", flush=True)  # fmt: skip
        own_rule = calibration.chosen
    print(f"own-choice rule: {own_rule} ({'chosen here' if rechoose or not trained.own_choices else 'router.json'}; "
          f"router.json's: {trained.own_choices})", flush=True)  # fmt: skip

    rows = []
    for label, router in (("encoder", threshold.with_own_choices(own_rule)), ("encoder-threshold", threshold)):
        measured = measure_evidence(
            evaluation,
            baseline=baseline,
            routed=routed,
            kinds=["encoder"],
            routers={"encoder": router},
            retrieve=retrieve,
            trees=trees,
        )
        rows += [
            dataclasses.replace(r, strategy=r.strategy.replace("rdr2-encoder", f"rdr2-{label}"))
            for r in measured
            if r.router or not rows  # rag-hybrid's rows once
        ]
    summary = summarise_evidence(rows)
    header, body = evidence_table(summary)
    print(f"\n{collection}: {len(evaluation)} dev+test questions; rdr2-encoder: own-choice rule {own_rule}; "
          f"rdr2-encoder-threshold: the calibrated threshold\n\n{markdown_table(header, body)}", flush=True)  # fmt: skip
    if misses:
        show_misses(threshold.with_own_choices(own_rule), evaluation, routed, retrieve, trees)
    if ideas:
        reranker = session.reranker  # the collection's published passage reranker, if any
        measure_ideas(held_out, threshold, evaluation, baseline, routed, retrieve, trees, target, reranker)


def measure_ideas(
    held_out, trained: ScoringRouter, evaluation, baseline, routed, retrieve, trees, target, reranker=None
) -> None:
    """Each idea family's setting chosen on `held_out`'s questions, measured on `evaluation`."""
    from rag_assets.core.answering.strategies import gather_evidence
    from rag_assets.core.evaluation.evidence import evidence_table, summarise_evidence
    from rag_assets.core.evaluation.held_out_evidence import HeldOutEvidence
    from rag_assets.core.tables import markdown_table

    candidates = idea_candidates(trained, reranker)

    def judge(questions, budgets, router, fill: bool, cap) -> HeldOutEvidence:
        cut = [cap(b) if cap else b for b in budgets]
        spec = dataclasses.replace(routed, fill_budget=fill)
        return HeldOutEvidence(questions, cut, held_out.metric, spec, retrieve, trees, held_out.baseline)

    tried: dict[str, list[tuple[OwnChoiceTrial, str, object, bool, object]]] = {}
    budget_total = sum(held_out.budgets)
    for family, label, router, fill, cap in candidates:
        setting = judge(held_out.questions, held_out.budgets, router, fill, cap)
        value, share = setting.measure(router)
        share = share * sum(setting.budgets) / budget_total  # of rag-hybrid's words, not of the cap
        print(f"  validation {family:9s} {label:18s} {held_out.metric} {value:.3f} at {share:.0%}", flush=True)
        tried.setdefault(family, []).append((OwnChoiceTrial(0.0, 0.0, value, share), label, router, fill, cap))

    base = gather_evidence([q.query for q in evaluation], baseline, retrieve=retrieve, trees=trees)
    budgets = [g.words for g in base]
    rows = [_row("rag-hybrid", "", g, q) for g, q in zip(base, evaluation)]
    for family, options in tried.items():
        best = pick_own_choices([o[0] for o in options], held_out.baseline, target)
        if best is None:
            print(f"  {family}: no setting within {target:.0%} of rag-hybrid's words on validation")
            continue
        _, label, router, fill, cap = next(o for o in options if o[0] is best)
        print(f"  {family}: chosen {label} ({held_out.metric} {best.evidence:.3f} at {best.words_share:.0%})")
        cut = [cap(b) if cap else b for b in budgets]
        spec = dataclasses.replace(routed, fill_budget=fill)
        gathered = gather_evidence(
            [q.query for q in evaluation], spec, retrieve=retrieve, trees=trees, routers={"encoder": router},
            evidence_budgets=cut,
        )  # fmt: skip
        rows += [_row(f"rdr2-encoder {label}", "encoder", g, q) for g, q in zip(gathered, evaluation)]
    header, body = evidence_table(summarise_evidence(rows))
    print(f"\nideas, {len(evaluation)} dev+test questions\n\n{markdown_table(header, body)}")


Candidate = tuple[str, str, object, bool, Callable[[int], int] | None]


def idea_candidates(trained: ScoringRouter, reranker=None) -> list[Candidate]:
    """(family, label, router, budget fill, word cap of rag-hybrid's words) for every idea tried
    (the `rr` family only with a trained `reranker`)."""
    candidates = policy_candidates(trained)
    for words in (100, 150, 200, 250):
        router = PolicyRouter(trained, -1.0, 50, fallback=True)
        candidates.append(("words", f"all@{words}", router, False, lambda b, w=words: min(b, w)))
    for share in (0.3, 0.45, 0.6):
        candidates.append(("fill", f"fill@{share:g}", trained, True, lambda b, s=share: int(b * s)))
    if reranker is not None:
        candidates += reranker_candidates(trained, reranker)
    return candidates


def policy_candidates(trained: ScoringRouter) -> list[Candidate]:
    """The `PolicyRouter` families: threshold and count, whole sections, whole lists and tables, no refusal."""
    candidates: list[Candidate] = []
    for answer in (0.7, 0.6, 0.5, 0.4, 0.3, 0.2):
        for count in (3, 5, 8, 12):
            candidates.append(("threshold", f"t{answer:g}+k{count}", PolicyRouter(trained, answer, count), False, None))
    for answer in (0.7, 0.6, 0.5, 0.4):
        for count in (1, 2, 3):
            for fallback in (False, True):
                label = f"t{answer:g}+k{count}+sec" + ("+fb" if fallback else "")
                router = PolicyRouter(trained, answer, count, sections=True, fallback=fallback)
                candidates.append(("section", label, router, False, None))
        for count in (1, 2, 3, 5, 8):
            router = PolicyRouter(trained, answer, count, runs=True)
            candidates.append(("run", f"t{answer:g}+k{count}+run", router, False, None))
    for answer in (0.7, 0.6, 0.5):
        candidates.append(
            ("fallback", f"t{answer:g}+k3+fb", PolicyRouter(trained, answer, 3, fallback=True), False, None)
        )
    return candidates


def reranker_candidates(trained: ScoringRouter, reranker) -> list[tuple[str, str, object, bool, None]]:
    """The own-choice rule's grid on content nodes scored by the trained passage reranker."""
    from rag_assets.core.routing.own_choices import MARGINS, SECTION_WEIGHTS, OwnChoices

    candidates: list[tuple[str, str, object, bool, None]] = []
    for mix in (1.0, 0.5):
        for weight in sorted({trained.section_weight, *SECTION_WEIGHTS}):
            for margin in MARGINS:
                router = RerankerScoredRouter(trained, reranker.scorer, mix, OwnChoices(margin, weight))
                candidates.append((f"rr{mix:g}", f"rr{mix:g}+w{weight:g}+m{margin:g}", router, False, None))
    return candidates


def show_misses(router: ScoringRouter, evaluation, routed, retrieve, trees) -> None:
    """Each question whose own choices (no fill, uncut) hold no gold answer string: the best node
    score of each of its views and every node holding a gold answer, shown or not, with its score."""
    from rag_assets.core.answering.strategies import gather_evidence
    from rag_assets.core.evaluation.scoring import passage_hit

    spec = dataclasses.replace(routed, fill_budget=False)
    print("\nown choices' misses (gold: a node holding a gold answer string)")
    for question in evaluation:
        if passage_hit("", question.answers) is None:
            continue  # long or yes/no answers: no node holds them as a string
        spy = ViewRecorder(router)
        (gathered,) = gather_evidence(
            [question.query], spec, retrieve=retrieve, trees=trees, routers={"encoder": spy}, evidence_budgets=[10**6]
        )  # fmt: skip
        if passage_hit(gathered.evidence, question.answers):
            continue
        print(f"{question.qid} {question.query!r} answers {list(question.answers)}: {gathered.words} words")
        for request, reply in spy.seen:
            nodes = request.state.nodes
            shown = reply.candidates or {}
            best = max(shown.values(), default=float("nan"))
            print(f"  view of {request.state.doc_id} (round {'last' if request.final_round else 'first'}): "
                  f"{len(shown)} nodes scored, best {best:.3f}, answered {sorted(reply.scores)}")  # fmt: skip
            for n, node in enumerate(nodes):
                if node.kind == "content" and passage_hit(node.text, question.answers):
                    score = f"{shown[n]:.3f}" if n in shown else "not shown"
                    print(f"    gold node {n} ({score}): {node.text[:70]!r}")


class ViewRecorder:
    """A router that records every view it was given and its reply (for `--misses`)."""

    fits_views = False

    def __init__(self, router: ScoringRouter) -> None:
        self.router, self.kind, self.fill_order = router, router.kind, router.fill_order
        self.seen: list[tuple[RouteRequest, RouterReply]] = []

    def count_tokens(self, text: str) -> int:
        return self.router.count_tokens(text)

    def route(self, requests: Sequence[RouteRequest], knobs: RoutingKnobs) -> list[RouterReply]:
        replies = self.router.route(requests, knobs)
        self.seen += list(zip(requests, replies))
        return replies


class RerankerScoredRouter(ScoringRouter):
    """The trained encoder router with each shown content node scored by a trained passage
    reranker's scorer (for `--ideas`): `mix` times its score plus `1 - mix` times the encoder's;
    collapsed headings keep the encoder's score, the decisions are the base router's."""

    def __init__(self, base: ScoringRouter, scorer, mix: float, own_choices=None) -> None:
        super().__init__(
            base.encoder, base.thresholds, kind=base.kind, contextual=base.contextual,
            section_weight=base.section_weight, fill_order=base.fill_order, count_tokens=base.count_tokens,
            own_choices=own_choices,
        )  # fmt: skip
        self._vectors = base._vectors  # the encoder's embedding cache is shared
        self.base, self.scorer, self.mix = base, scorer, mix

    def _cosines(self, query_and_nodes):
        from rag_assets.core.routing.scoring_router import content_context

        mixed = []
        for (query, state, _, _), (content, headings) in zip(query_and_nodes, super()._cosines(query_and_nodes)):
            ids = list(content)
            scores = self.scorer.scores(query, [content_context(state.nodes, n) for n in ids]) if ids else []
            mixed.append(({n: self.mix * s + (1 - self.mix) * content[n] for n, s in zip(ids, scores)}, headings))
        return mixed


def _row(name: str, router: str, gathered, question):
    from rag_assets.core.evaluation.evidence import EvidenceRow
    from rag_assets.core.evaluation.held_out_evidence import evidence_metrics

    figures = evidence_metrics(gathered, question)
    words = int(figures.pop("words"))
    return EvidenceRow(name, router, False, question.qid, figures, words, 0.0)


RUN_BLOCKS = frozenset({BlockKind.LIST_ITEM, BlockKind.TABLE_ROW})  # blocks whose siblings `+run` brings along


def run_of(node) -> tuple[int | None, str] | None:
    """The list or table a list item or table row belongs to (its parent and kind); None for others."""
    return (node.parent_id, node.block) if node.block in RUN_BLOCKS else None


def with_shown_peers(answers: Sequence[int], shown, group: Callable[[int], object]) -> list[int]:
    """`answers` and every shown content node in a group (`group(n)`, None: in none) one of them is in."""
    groups = {group(n) for n in answers} - {None}
    return sorted({*answers, *(n for n in shown if group(n) in groups)})


class PolicyRouter:
    """The trained encoder answering by another policy (for `--ideas`): threshold `answer`, at
    most `count` per view; `sections`: an answered node brings its section's shown content;
    `runs`: an answered list item or table row brings the shown items or rows of its list or
    table (same parent, same kind); `fallback`: a document with nothing answered or expanded
    expands its best heading (or, in the last round, answers its best node)."""

    fits_views = False

    def __init__(
        self,
        base: ScoringRouter,
        answer: float,
        count: int,
        *,
        sections: bool = False,
        runs: bool = False,
        fallback: bool = False,
    ) -> None:
        self.base, self.answer, self.count, self.sections, self.fallback = base, answer, count, sections, fallback
        self.runs = runs
        self.kind, self.fill_order = base.kind, base.fill_order

    def count_tokens(self, text: str) -> int:
        return self.base.count_tokens(text)

    def route(self, requests: Sequence[RouteRequest], knobs: RoutingKnobs) -> list[RouterReply]:
        queries = [
            (r.query, r.state, sorted(r.view.visible_content_ids), sorted(r.view.collapsed_heading_ids))
            for r in requests
        ]
        t = self.base.thresholds
        replies = []
        for request, scores in zip(requests, self.base.score(queries)):
            expanding = knobs.expands and not request.final_round
            answers = pick_best(scores.answer, self.answer, self.count)
            expands = pick_best(scores.expand, t.expand, t.max_expands) if expanding else []
            if self.fallback and not answers and not expands:
                if expanding and scores.expand:
                    expands = pick_best(scores.expand, float("-inf"), 1)
                elif scores.answer:
                    answers = pick_best(scores.answer, float("-inf"), 1)
            nodes, shown = request.state.nodes, request.view.visible_content_ids
            if self.sections and answers:
                answers = with_shown_peers(answers, shown, request.state.section.get)
            if self.runs and answers:
                answers = with_shown_peers(answers, shown, lambda n, nodes=nodes: run_of(nodes[n]))
            text = format_actions([(n, nodes[n].text) for n in answers], [(h, nodes[h].text) for h in expands])
            replies.append(RouterReply(text, scores={n: scores.answer[n] for n in answers}, candidates=scores.answer))
        return replies


if __name__ == "__main__":
    main()
