"""A routing round batched vs sequential, and RDR2's cost per question.

1. The same first routing round (the Retrieval SubTrees of the top-k documents of N questions)
   generated twice: ONE batched `generate` call over all chats (what `route_documents` does) vs
   one `generate` call per document (what the paper's reference code does). Prints both wall
   times and the speed-up.
2. With `--rdr2`: the whole RDR2 strategy (k documents, expand iterations 0 and 2) on the same
   questions: router + reader tokens per question and seconds per question.

Reads the materialized catalogue and index of a collection (default: the built-in
python-reference; `rag run` or the `reindex` job first), with the default engine (the packaged
SmolLM2, CPU unless CUDA is present):

    RAG_DATA_DIR=... .venv/bin/python -m benchmarks.routing_round [-n 8] [-k 5] [--rdr2]
"""

from __future__ import annotations

import argparse
import dataclasses
import time

from benchmarks.common import catalogue_in, session_models
from rag_assets.core.answering.policy.catalogue import StrategySettings, named_spec
from rag_assets.core.answering.policy.sessions import open_session
from rag_assets.core.corpus.question_sets import BUILTIN_PYTHON_REFERENCE_QUESTIONS, load_questions
from rag_assets.core.routing.navigation import RoutingKnobs, fit_view, router_messages, router_regex
from rag_assets.core.routing.samples import documents_in_order
from rag_assets.core.routing.subtree import DocumentRouting
from rag_assets.core.store.connections import catalogue_connection


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-c", "--collection", default="python-reference")
    parser.add_argument("-q", "--questions", default=BUILTIN_PYTHON_REFERENCE_QUESTIONS)
    parser.add_argument("-n", type=int, default=8, help="questions")
    parser.add_argument("-k", type=int, default=5, help="documents routed per question")
    parser.add_argument("--max-new-tokens", type=int, default=48, help="router output budget")
    parser.add_argument("--batch-size", type=int, default=64, help="engine batch size (chats per forward pass)")
    parser.add_argument("--rdr2", action="store_true", help="also run RDR2 end to end at iters 0 and 2")
    args = parser.parse_args()

    questions = [q.query for q in load_questions(args.questions)[0] if not q.not_answerable][: args.n]
    with catalogue_connection(catalogue_in(), read_only=True) as con:
        session = open_session(con, args.collection, session_models(batch_size=args.batch_size))
    # the base model routes (no adapter is named): the round's cost, not a trained router's choices
    engine, trees, retrieve = session.engine, session.trees, session.retrieve
    knobs = RoutingKnobs(max_new_tokens=args.max_new_tokens)
    chats, grammars = [], []
    for question in questions:
        for doc_id, hit_ids in documents_in_order(retrieve(question, "hybrid", 2 * args.k), args.k):
            state = DocumentRouting(doc_id, trees[doc_id])
            view = fit_view(state, state.light(hit_ids), knobs, engine.count_tokens)  # as route_documents
            chats.append(router_messages(question, view, knobs, engine.count_tokens))
            grammars.append(router_regex(view, knobs))  # the per-view grammar the pipeline decodes under
    engine.generate(chats[:2], max_new_tokens=4)  # warm-up: first-call overheads out of both timings
    started = time.perf_counter()
    batched = engine.generate(chats, max_new_tokens=knobs.max_new_tokens, regex=grammars)
    batched_s = time.perf_counter() - started
    started = time.perf_counter()
    for chat, grammar in zip(chats, grammars):
        engine.generate([chat], max_new_tokens=knobs.max_new_tokens, regex=grammar)
    sequential_s = time.perf_counter() - started
    prompt = sum(g.prompt_tokens for g in batched) / len(batched)
    print(
        f"routing round: {len(questions)} questions x {args.k} documents = {len(chats)} subtrees, "
        f"{prompt:.0f} prompt tokens/subtree, max {knobs.max_new_tokens} new tokens, engine {engine.model_id} "
        f"on {getattr(engine, 'device', '?')}"
    )
    print(f"batched    (1 generate call):   {batched_s:8.1f} s")
    print(f"sequential ({len(chats)} generate calls): {sequential_s:8.1f} s")
    print(f"speed-up: {sequential_s / batched_s:.2f}x")

    if args.rdr2:
        for iters in (0, 2):
            settings = StrategySettings(
                top_k=args.k,
                passages_per_query=2 * args.k,
                expand_iterations=iters,
                router_max_new_tokens=args.max_new_tokens,
                evidence_budget=False,
            )
            spec = named_spec("rdr2-base", "short", None, settings)
            spec = dataclasses.replace(spec, name=f"rdr2-base-iters{iters}")
            outcomes = session.run(questions, spec, use_floor=False)
            n = len(outcomes)
            router = sum(o.router_prompt_tokens + o.router_output_tokens for o in outcomes) / n
            reader = sum(o.reader_prompt_tokens + o.reader_output_tokens for o in outcomes) / n
            print(
                f"rdr2 k={args.k} iters={iters}: {router + reader:.0f} tokens/question "
                f"(router {router:.0f}, reader {reader:.0f}), {outcomes[0].seconds:.1f} s/question, "
                f"evidence {sum(o.evidence_words for o in outcomes) / n:.0f} words, "
                f"engine calls {max(o.engine_calls for o in outcomes)}, "
                f"refused {sum(o.refused_docs for o in outcomes)}/{sum(len(o.retrieved_doc_ids) for o in outcomes)} docs"
            )


if __name__ == "__main__":
    main()
