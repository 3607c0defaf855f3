"""The answering strategies end to end: a real LanceDB index of the conftest corpus, the real
embedder, the real transformers engine with the packaged SmolLM2 (small generation budgets)."""

from __future__ import annotations

import dataclasses

import pytest

from rag_assets.core.answering.strategy_runner import run_strategy
from rag_assets.core.answering.types import StrategySpec
from rag_assets.core.corpus.tree import STRUCTURE
from rag_assets.core.engines.base import BatchClock, Generation
from tests.integration.conftest import CountingEngine, IndexedCorpus

QUESTIONS = ["How hot should the water be for green tea?", "What keeps the pond fish alive in winter?"]


def _check_citations(outcomes, trees, texts) -> None:
    for outcome in outcomes:
        for cite in outcome.citations:
            node = trees[cite.doc_id][cite.node_id]
            assert node.kind != STRUCTURE
            assert texts[cite.doc_id][cite.span_start : cite.span_end] == cite.text
            assert node.text[cite.span_start - node.span_start : cite.span_end - node.span_start] == cite.text


def test_rdr2_batches_each_round_and_the_reader(counting_engine: CountingEngine, indexed_corpus: IndexedCorpus) -> None:
    retrieve, trees, texts = indexed_corpus.retrieve, indexed_corpus.trees, indexed_corpus.texts
    spec = StrategySpec(
        "rdr2-base",
        "rdr2",
        top_k=2,
        passages_per_query=4,
        expand_iterations=1,
        router_max_new_tokens=24,
        reader_max_new_tokens=8,
    )
    counting_engine.reset()
    outcomes = run_strategy(QUESTIONS, spec, retrieve=retrieve, trees=trees, engine=counting_engine)
    routed_docs = sum(len(o.retrieved_doc_ids) for o in outcomes)
    assert len(counting_engine.calls[0]) == routed_docs == 4  # round 1: 2 questions x 2 documents, ONE call
    assert len(counting_engine.calls[-1]) == 2  # ONE reader call for both questions
    assert len(counting_engine.calls) <= 1 + 2  # at most 1 + expand_iterations routing rounds, then the reader
    assert max(o.engine_calls for o in outcomes) == len(counting_engine.calls)
    for outcome in outcomes:
        assert len(outcome.passage_ids) <= 4 and outcome.router_prompt_tokens > 0 and outcome.reader_prompt_tokens > 0
        assert outcome.seconds == outcomes[0].seconds > 0
        # the reader saw exactly the numbered routed nodes, in citation order, each under its
        # heading path's line (or nothing when all were refused)
        for number, cite in enumerate(outcome.citations, start=1):
            assert f"\n[{number}] {cite.text}" in outcome.evidence
            heading = f"# {' > '.join(cite.heading_path)}\n"
            assert heading in outcome.evidence.split(f"[{number}] ")[0]
        assert bool(outcome.evidence) == bool(outcome.citations)
        assert outcome.refused_docs <= len(outcome.retrieved_doc_ids)
    _check_citations(outcomes, trees, texts)


def test_ablation_prompts_hide_what_they_take_away(
    counting_engine: CountingEngine, indexed_corpus: IndexedCorpus
) -> None:
    retrieve, trees = indexed_corpus.retrieve, indexed_corpus.trees
    base = dict(top_k=2, passages_per_query=4, expand_iterations=2, router_max_new_tokens=16, reader_max_new_tokens=4)
    for spec in (
        StrategySpec("rdr2-no-structure", "rdr2", structure=False, **base),
        StrategySpec("rdr2-no-expand", "rdr2", allow_expand=False, **base),
    ):
        counting_engine.reset()
        [outcome] = run_strategy(QUESTIONS[:1], spec, retrieve=retrieve, trees=trees, engine=counting_engine)
        assert len(counting_engine.calls) == 2  # one routing round (nothing to expand), one reader call
        for chat in counting_engine.calls[0]:
            system, user = chat[0]["content"], chat[1]["content"]
            assert "[EXPAND]" not in system and "EXPAND" not in user
            if not spec.structure:
                rendered = user.split("Document:\n", 1)[1].rsplit("\n\nActions:", 1)[0].splitlines()
                headings = {f"{n.node_id}: {n.text}" for nodes in trees.values() for n in nodes if n.kind == STRUCTURE}
                assert rendered and not headings & {line.strip() for line in rendered}
                assert all(not line.startswith(" ") for line in rendered)  # flat: no indentation
                assert "heading" not in system.lower()
        assert outcome.engine_calls == 2


def test_rag_and_none_make_one_reader_call(counting_engine: CountingEngine, indexed_corpus: IndexedCorpus) -> None:
    retrieve, trees, texts = indexed_corpus.retrieve, indexed_corpus.trees, indexed_corpus.texts
    counting_engine.reset()
    rag = run_strategy(
        QUESTIONS,
        StrategySpec("rag-hybrid", "rag", top_k=2, reader_max_new_tokens=6),
        retrieve=retrieve,
        trees=trees,
        engine=counting_engine,
    )
    assert len(counting_engine.calls) == 1 and len(counting_engine.calls[0]) == 2
    for outcome in rag:
        assert len(outcome.passage_ids) == 2 and outcome.evidence.startswith("[1] ") and "\n\n[2] " in outcome.evidence
        assert outcome.citations and outcome.router_prompt_tokens == 0 and outcome.engine_calls == 1
    assert rag[0].retrieved_doc_ids[0] == "tiny/kettle.md"
    _check_citations(rag, trees, texts)
    counting_engine.reset()
    none = run_strategy(
        QUESTIONS,
        StrategySpec("no-retrieval", "none", reader_max_new_tokens=6),
        retrieve=retrieve,
        trees=trees,
        engine=counting_engine,
    )
    assert len(counting_engine.calls) == 1 and all(
        o.evidence == "" and o.citations == [] and o.passage_ids == [] for o in none
    )
    assert "Evidence" not in counting_engine.calls[0][0][1]["content"]
    with pytest.raises(ValueError, match="kind"):
        StrategySpec("x", "magic")


def test_a_caching_engine_replays_grid_points_and_charges_their_seconds(
    counting_engine: CountingEngine, indexed_corpus: IndexedCorpus
) -> None:
    """The answers asset's grids through CachingEngine: the top-k 1 run routes the first document
    of the top-k 2 run, so its routing round is replayed (never sent to the model), its answers
    are those it gets alone, and its seconds include the replayed generations."""
    import dataclasses

    from rag_assets.core.engines.cache import CachingEngine

    retrieve, trees = indexed_corpus.retrieve, indexed_corpus.trees
    spec = StrategySpec(
        "rdr2-base",
        "rdr2",
        top_k=2,
        passages_per_query=4,
        expand_iterations=0,
        router_max_new_tokens=16,
        reader_max_new_tokens=6,
    )
    one = dataclasses.replace(spec, top_k=1)
    alone = run_strategy(QUESTIONS, one, retrieve=retrieve, trees=trees, engine=counting_engine)
    cached = CachingEngine(counting_engine)
    run_strategy(QUESTIONS, spec, retrieve=retrieve, trees=trees, engine=cached)
    assert (cached.hits, cached.misses) == (0, 4 + 2)  # 2 x 2 documents routed, 2 reader prompts
    counting_engine.reset()
    replayed = run_strategy(QUESTIONS, one, retrieve=retrieve, trees=trees, engine=cached)
    # round 1 of top-k 1 = the first documents of top-k 2: replayed; the reader prompts run again
    # only where the evidence differs (the second document contributed nodes)
    assert cached.hits + cached.misses == 6 + 2 + 2 and cached.hits >= 2 and cached.replayed_seconds > 0
    assert sum(len(batch) for batch in counting_engine.calls) == cached.misses - 6 <= 2
    assert [o.answer for o in replayed] == [o.answer for o in alone]
    assert [o.router_prompt_tokens for o in replayed] == [o.router_prompt_tokens for o in alone]
    assert replayed[0].seconds * len(QUESTIONS) >= cached.replayed_seconds


def test_the_caching_engine_keys_on_everything_that_changes_the_output(counting_engine: CountingEngine) -> None:
    from rag_assets.core.engines.cache import CachingEngine

    chats = [[{"role": "user", "content": "Say yes."}], [{"role": "user", "content": "Say no."}]]
    cached = CachingEngine(counting_engine)
    first = cached.generate(chats + chats[:1], max_new_tokens=4)  # a repeat inside one batch runs once
    assert (cached.misses, cached.hits) == (2, 1) and first[0] == first[2]
    counting_engine.reset()
    assert cached.generate(chats, max_new_tokens=4) == first[:2] and counting_engine.calls == []
    cached.generate(chats, max_new_tokens=5)
    cached.generate(chats, max_new_tokens=4, regex="(yes|no)")
    cached.generate(chats[:1], max_new_tokens=4, temperature=0.7)  # sampling is never cached
    cached.generate(chats[:1], max_new_tokens=4, temperature=0.7)
    assert [len(batch) for batch in counting_engine.calls] == [2, 2, 1, 1]


def test_the_batch_clock_charges_replayed_generations_once_per_engine() -> None:
    class Replaying:
        replayed_seconds = 5.0

    engine = Replaying()
    clock = BatchClock(engine, engine, None)  # the reader is the engine: counted once
    engine.replayed_seconds += 30.0  # a caching engine served 30 s of generations again
    per_question = clock.seconds_per_question(3)
    assert 10.0 <= per_question < 11.0  # (wall + 30 s replayed) / 3 questions
    assert clock.seconds_per_question(0) >= 30.0  # no division by zero


class SilentReader(CountingEngine):
    """The real engine's class with a reader that stops at once: the packaged reader does so on
    some real questions (empty answers on the real sets), but no prompt makes it do so on purpose."""

    def __init__(self) -> None:  # no model loaded: it never generates
        self.model_id = "silent-reader"

    def generate(self, batch, **kwargs):
        return [Generation("", 10, 0) for _ in batch]


def test_an_answer_the_reader_left_empty_is_the_best_sentence_of_its_evidence(
    counting_engine: CountingEngine, indexed_corpus: IndexedCorpus
) -> None:
    from rag_assets.core.answering.extractive import EmbedderScorer
    from rag_assets.core.answering.types import RetrievalExtras
    from rag_assets.core.index.embedding import Embedder

    retrieve, trees, texts = indexed_corpus.retrieve, indexed_corpus.trees, indexed_corpus.texts
    spec = StrategySpec("rag-hybrid", "rag", top_k=3, reader_max_new_tokens=6)
    scorer = EmbedderScorer(Embedder(progress=False))
    run = dict(retrieve=retrieve, trees=trees, engine=counting_engine, reader=SilentReader())
    [answered] = run_strategy(QUESTIONS[:1], spec, extras=RetrievalExtras(answer_scorer=scorer), **run)
    assert answered.reader_empty and answered.answer_form == "extractive" and answered.attribution == "extractive"
    assert answered.answer and answered.answer in answered.citations[0].text  # cited where it stands
    assert answered.citations[0].doc_id == "tiny/kettle.md" and answered.supporting == 1
    _check_citations([answered], trees, texts)
    # without a scorer to choose a sentence the empty answer stays empty, resting on nothing
    [empty] = run_strategy(QUESTIONS[:1], spec, **run)
    assert (empty.answer, empty.reader_empty, empty.answer_form, empty.supporting) == ("", False, "generated", 0)


# questions the tiny corpus answers (kettle, pond, pass statement, tea), and ones it does not
ANSWERED = [
    "How hot should the water be for green tea?",
    "How much water at most goes into the kettle?",
    "What is the pass statement?",
    "What should stay open in the pond ice in winter?",
    "What keeps the pond fish alive in winter?",
    "Which charger should I use for the battery?",
]
OFF_TOPIC = ["How do I bake sourdough bread?", "Who won the football world cup in 1966?"]


def test_a_question_the_documents_do_not_answer_is_said_not_found(
    counting_engine: CountingEngine, indexed_corpus: IndexedCorpus
) -> None:
    from rag_assets.core.answering.extractive import EmbedderScorer
    from rag_assets.core.answering.no_answer import NOT_FOUND_ANSWER, calibrate_floor, evidence_relevance
    from rag_assets.core.answering.types import RetrievalExtras
    from rag_assets.core.index.embedding import Embedder

    retrieve, trees = indexed_corpus.retrieve, indexed_corpus.trees
    spec = StrategySpec("rag-hybrid-extractive", "rag", top_k=3, answer_form="extractive")
    scorer = EmbedderScorer(Embedder(progress=False))
    run = dict(retrieve=retrieve, trees=trees, engine=counting_engine)
    # the floor, measured as `answers` measures it: the relevance of questions the documents answer
    measured = run_strategy(ANSWERED, spec, extras=RetrievalExtras(answer_scorer=scorer), **run)
    floor = calibrate_floor([evidence_relevance(o.question, o.citations, scorer) for o in measured], [], "embedder")
    assert floor is not None and floor.questions == len(ANSWERED)
    extras = RetrievalExtras(answer_scorer=scorer, relevance_floor=floor.value, relevance_scorer=scorer)
    [kept, *refused] = run_strategy([ANSWERED[0], *OFF_TOPIC], spec, extras=extras, **run)
    assert not kept.not_found and "80" in kept.answer and kept.supporting == 1
    for outcome in refused:
        assert outcome.not_found and outcome.answer == NOT_FOUND_ANSWER
        assert outcome.relevance < floor.value and outcome.supporting == 0  # its evidence stays, supporting nothing
        assert outcome.citations
        assert "not found" in floor.note(outcome.relevance)
    # generated: the questions below the floor never reach the reader (nothing streamed is taken back)
    counting_engine.reset()
    generated = StrategySpec("rag-hybrid", "rag", top_k=3, reader_max_new_tokens=8)
    [read, *unread] = run_strategy([ANSWERED[0], *OFF_TOPIC], generated, extras=extras, **run)
    assert counting_engine.sizes == [1] and not read.not_found and read.answer != NOT_FOUND_ANSWER
    for outcome in unread:
        assert outcome.not_found and outcome.answer == NOT_FOUND_ANSWER and outcome.reader_output_tokens == 0
        assert outcome.supporting == 0 and outcome.citations


def test_a_quote_answering_a_yes_no_question_starts_with_the_readers_verdict(
    counting_engine: CountingEngine, indexed_corpus: IndexedCorpus
) -> None:
    from rag_assets.core.answering.extractive import EmbedderScorer
    from rag_assets.core.answering.types import RetrievalExtras
    from rag_assets.core.answering.verdict import VERDICTS
    from rag_assets.core.index.embedding import Embedder

    spec = StrategySpec("rag-hybrid-extractive", "rag", top_k=3, answer_form="extractive")
    extras = RetrievalExtras(answer_scorer=EmbedderScorer(Embedder(progress=False)))
    run = dict(retrieve=indexed_corpus.retrieve, trees=indexed_corpus.trees, engine=counting_engine)
    counting_engine.reset()
    asked = ["Does the light turn on when I press the kettle's switch?", "How hot should the water be for green tea?"]
    [yes_no, other] = run_strategy(asked, spec, extras=extras, **run)
    verdict, quote = yes_no.answer.split(". ", 1)
    assert verdict in VERDICTS and yes_no.verdict == verdict  # scored by the real reader: nothing else puts it there
    assert quote in yes_no.citations[0].text and yes_no.supporting == 1  # the quote still rests on its sentence
    assert (
        not other.answer.startswith(tuple(f"{v}. " for v in VERDICTS)) and "80" in other.answer and other.verdict == ""
    )
    assert counting_engine.sizes == []  # scored, never generated


def test_a_figure_answer_is_not_refused_by_the_floor(counting_engine: CountingEngine) -> None:
    """A figure computed from cited cells answers even where the evidence's best passage scores
    under the relevance floor; the quote of the same evidence does not."""
    from rag_assets.core.answering.extractive import EmbedderScorer
    from rag_assets.core.answering.figure_answers import FIGURE
    from rag_assets.core.answering.no_answer import NOT_FOUND_ANSWER
    from rag_assets.core.answering.types import RetrievalExtras
    from rag_assets.core.corpus.parsers.markdown import parse_markdown
    from rag_assets.core.corpus.tree import build_tree
    from rag_assets.core.index.embedding import Embedder
    from rag_assets.core.index.retrieval import SearchHit

    report = (
        "# ACME annual report\n\n## Consolidated Balance Sheets\n\n(In millions)\n\n"
        "| | December 31, 2022 | December 31, 2021 |\n|---|---|---|\n"
        "| Total current assets | 1,200 | 1,000 |\n| Total current liabilities | 800 | 750 |\n"
    )
    nodes = build_tree("ACME", parse_markdown(report)).nodes
    trees = {"acme/report.md": nodes}
    rows = [n for n in nodes if n.block == "table_row" and n.text.startswith("Total")]

    def retrieve(query: str, mode: str, k: int, **options: object) -> list[SearchHit]:
        return [
            SearchHit(
                i, 0.5, f"p{i}", "acme/report.md", "acme", (n.node_id,), ((n.span_start, n.span_end),), (), n.text
            )
            for i, n in enumerate(rows)
        ]

    scorer = EmbedderScorer(Embedder(progress=False))
    # a floor no evidence reaches: every quote is refused
    extras = RetrievalExtras(answer_scorer=scorer, relevance_floor=1.01, relevance_scorer=scorer)
    spec = StrategySpec("rag-hybrid-extractive", "rag", top_k=2, answer_form="extractive")
    asked = [
        "What is ACME's FY2022 working capital ratio? It is defined as: total current assets / total current "
        "liabilities. Round your answer to two decimal places.",
        "What did ACME report about its current assets?",
    ]
    [figure, quote] = run_strategy(asked, spec, retrieve=retrieve, trees=trees, engine=counting_engine, extras=extras)
    assert (
        figure.attribution == FIGURE
        and figure.answer.startswith("1.50 = total current assets")
        and not figure.not_found
    )
    assert quote.not_found and quote.answer == NOT_FOUND_ANSWER


def test_a_yes_no_over_a_measure_is_computed_from_cells_not_asked_of_the_reader(
    counting_engine: CountingEngine,
) -> None:
    """ "Improving operating margin?" is answered by the sign of the margins' difference, every cell
    cited, and the reader scores no verdict for it; a yes/no over no measure still gets the reader's."""
    from rag_assets.core.answering.extractive import EmbedderScorer
    from rag_assets.core.answering.figure_answers import FIGURE
    from rag_assets.core.answering.types import RetrievalExtras
    from rag_assets.core.answering.verdict import VERDICTS
    from rag_assets.core.corpus.parsers.markdown import parse_markdown
    from rag_assets.core.corpus.tree import build_tree
    from rag_assets.core.index.embedding import Embedder
    from rag_assets.core.index.retrieval import SearchHit

    report = (
        "# ACME annual report\n\n## Consolidated Statements of Income\n\n(In millions)\n\n"
        "| | 2022 | 2021 |\n|---|---|---|\n| Net sales | 9,400 | 8,100 |\n| Operating income | 1,100 | 1,000 |\n\n"
        "## Outlook\n\nWe expect demand for our widgets to grow next year.\n"
    )
    nodes = build_tree("ACME", parse_markdown(report)).nodes
    trees = {"acme/report.md": nodes}
    paragraph = next(n for n in nodes if n.text.startswith("We expect"))

    def retrieve(query: str, mode: str, k: int, **options: object) -> list[SearchHit]:
        span = ((paragraph.span_start, paragraph.span_end),)
        return [SearchHit(0, 0.5, "p0", "acme/report.md", "acme", (paragraph.node_id,), span, (), paragraph.text)]

    extras = RetrievalExtras(answer_scorer=EmbedderScorer(Embedder(progress=False)))
    spec = StrategySpec("rag-hybrid-extractive", "rag", top_k=1, answer_form="extractive")
    asked = [
        "Does ACME have an improving operating margin profile as of FY2022?",
        "Does ACME expect demand for widgets to grow?",
    ]
    counting_engine.reset()
    [measure, plain] = run_strategy(asked, spec, retrieve=retrieve, trees=trees, engine=counting_engine, extras=extras)
    # 1,100 / 9,400 = 11.70% against 1,000 / 8,100 = 12.35%
    assert measure.answer.startswith("No: operating margin at FY2022 less operating margin at FY2021 is -0.6%")
    assert measure.verdict == "No" and measure.attribution == FIGURE and measure.engine_calls == 0
    assert {c.text.split(" | ")[0] for c in measure.citations[:2]} == {"Operating income", "Net sales"}
    assert plain.verdict in VERDICTS and plain.engine_calls == 1  # the reader scored this one
    # the quote alone (`figures` off): the reader's verdict, before the best sentence
    quote_alone = dataclasses.replace(spec, figures=False)
    [quoted] = run_strategy(
        asked[:1], quote_alone, retrieve=retrieve, trees=trees, engine=counting_engine, extras=extras
    )
    assert quoted.attribution != FIGURE and quoted.verdict in VERDICTS and quoted.engine_calls == 1
    assert quoted.answer == f"{quoted.verdict}. We expect demand for our widgets to grow next year."
