"""The generative router read as a ranker (`llm-rank`): likelihood instead of free generation.

A 135M model that generates its actions drifts (it repeats the first id, or stops early), yet it
may still *prefer* the right line. So every action the view allows is scored as the first line
of the router's reply — `[ANSWER] id: first words` for each visible paragraph, `[EXPAND] id:
heading` for each collapsed heading (not in the last round), and `Cannot answer` — by its mean
token log-probability under the same prompt and adapter as `llm` (one prompt pass per view, the
continuations on copies of its key/value cache: `LLMEngine.score_continuations`). An action is
taken when it beats refusing by the margin (`SimilarityThresholds.answer` / `.expand` read as
margins over the refusal's score, 0 by default: "likelier than giving up"), best first, at most
`max_answers` / `max_expands`; nothing beats refusal = the document is refused. The reply is
written in the router grammar and parsed like any other router's.
"""

from __future__ import annotations

from collections.abc import Sequence

from rag_assets.core.engines.base import LLMEngine
from rag_assets.core.routing.action_format import REFUSAL, format_actions
from rag_assets.core.routing.navigation import RouteRequest, RouterReply, RoutingKnobs, router_messages
from rag_assets.core.routing.teachers import SimilarityScores, SimilarityThresholds, pick_best

# Margins over the refusal's mean log-probability (nats per token)
RANK_MARGINS = SimilarityThresholds(answer=0.0, expand=0.0, max_answers=3, max_expands=2)


def engine_can_score(engine: LLMEngine) -> bool:
    """Whether `engine` (or the engine a cache wraps) reads logits: the transformers backend."""
    inner = getattr(engine, "inner", engine)
    return type(inner).score_continuations is not LLMEngine.score_continuations


class LikelihoodRouter:
    kind = "llm-rank"

    def __init__(self, engine: LLMEngine, margins: SimilarityThresholds = RANK_MARGINS) -> None:
        self.engine = engine
        self.thresholds = margins

    def count_tokens(self, text: str) -> int:
        return self.engine.count_tokens(text)

    def score(self, requests: Sequence[RouteRequest], knobs: RoutingKnobs) -> list[SimilarityScores]:
        """Each allowed action's log-probability minus the refusal's, per view."""
        chats, lines, keys = [], [], []
        for r in requests:
            nodes = r.state.nodes
            answers = sorted(r.view.visible_content_ids)
            expands = sorted(r.view.collapsed_heading_ids) if knobs.expands and not r.final_round else []
            chats.append(router_messages(r.query, r.view, knobs, self.engine.count_tokens))
            keys.append((answers, expands))
            lines.append(
                [format_actions([(n, nodes[n].text)], []) for n in answers]
                + [format_actions([], [(h, nodes[h].text)]) for h in expands]
                + [REFUSAL]
            )
        scored = self.engine.score_continuations(chats, lines, adapter=knobs.adapter)
        out = []
        for (answers, expands), scores in zip(keys, scored):
            refusal = scores[-1]
            out.append(
                SimilarityScores(
                    {n: s - refusal for n, s in zip(answers, scores)},
                    {h: s - refusal for h, s in zip(expands, scores[len(answers) :])},
                )
            )
        return out

    def route(self, requests: Sequence[RouteRequest], knobs: RoutingKnobs) -> list[RouterReply]:
        if not requests:
            return []
        t = self.thresholds
        replies = []
        for request, scores in zip(requests, self.score(requests, knobs)):
            answers = pick_best(scores.answer, t.answer, t.max_answers)
            expands = pick_best(scores.expand, t.expand, t.max_expands)
            if not answers and not expands and not knobs.allow_refuse and scores.answer:
                answers = pick_best(scores.answer, float("-inf"), 1)  # "no refuse": the likeliest shown node
            nodes = request.state.nodes
            text = format_actions([(n, nodes[n].text) for n in answers], [(h, nodes[h].text) for h in expands])
            replies.append(RouterReply(text, scores={n: scores.answer[n] for n in answers}, candidates=scores.answer))
        return replies
