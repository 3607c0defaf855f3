"""The teachers on hand-built subtrees with exact expected actions: the oracle, the LLM curation
teacher (recorded outputs for the JSON parsing, the real SmolLM2 for the batched call), the
similarity teacher with the real packaged embedder, threshold calibration and the mix."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_assets.core.corpus.blocks import heading, paragraph
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.corpus.tree import build_tree
from rag_assets.core.engines.base import ChatMessages, Generation, LLMEngine
from rag_assets.core.routing.action_format import parse_router_output
from rag_assets.core.routing.curation import curate
from rag_assets.core.routing.samples import RoutingSample
from rag_assets.core.routing.subtree import DocumentRouting
from rag_assets.core.routing.teachers import (
    SimilarityScores,
    SimilarityThresholds,
    TeacherTask,
    calibrate_thresholds,
    curation_messages,
    llm_teacher,
    oracle_label,
    oracle_teacher,
    parse_curation_output,
    similarity_teacher,
)
from rag_assets.core.routing.teachers.oracle import gold_content_ids
from rag_assets.core.routing.teachers.similarity import decision_f1


def doc() -> DocumentRouting:
    tree = build_tree(
        "Phone",
        [
            heading("Getting started", 1),  # 1
            paragraph("Charge the battery for 3 hours."),  # 2
            heading("Settings", 1),  # 3
            heading("Display", 2),  # 4
            paragraph("Dark mode saves the battery."),  # 5
            heading("Sound", 2),  # 6
            paragraph("Set the ringtone volume."),  # 7
        ],
    )
    return DocumentRouting("phone", tree.nodes)


def test_visible_answer_is_answered_and_hidden_one_expanded() -> None:
    d = doc()
    view = d.light([2])
    label = oracle_teacher(d, view, answers=["3 hours"])
    assert (label.answer_ids, label.expand_ids) == ((2,), ())
    assert label.target == "[ANSWER] 2: Charge the battery for 3"
    label = oracle_teacher(d, view, answers=["dark mode"])
    assert (label.answer_ids, label.expand_ids, label.target) == ((), (4,), "[EXPAND] 4: Display")
    assert parse_router_output(label.target, view).expand_ids == (4,)
    assert (label.kind, label.teacher, label.failed) == ("expand", "oracle", False)


def test_evidence_lines_section_paths_and_refusal() -> None:
    d = doc()
    view = d.light([2])
    by_evidence = oracle_teacher(d, view, evidences=["<p>Set the ringtone volume.</p>"])
    assert by_evidence.expand_ids == (6,)
    by_path = oracle_teacher(d, view, section_path=["Settings", "Sound"])
    assert (by_path.answer_ids, by_path.expand_ids) == ((), (6,))
    expanded = d.expand(6)
    assert oracle_teacher(d, expanded, section_path=["Settings", "Sound"]).answer_ids == (7,)
    nothing = oracle_teacher(d, view, answers=["bluetooth"])
    assert nothing.target == "Cannot answer" and parse_router_output(nothing.target, view).refused
    assert nothing.kind == "refuse"


def records_doc() -> DocumentRouting:
    tree = build_tree(
        "Records",
        [
            heading("Scoring", 1),  # 1
            paragraph("The most points in one game is 100, by Wilt Chamberlain in 1962."),  # 2
            paragraph("Chamberlain also led the league in rebounds in 1962."),  # 3
            heading("Attendance", 1),  # 4
            paragraph("No game drew more fans than the 1962 final."),  # 5
            paragraph("Tickets cost 100 cents."),  # 6
        ],
    )
    return DocumentRouting("records", tree.nodes)


def test_short_answers_mark_the_holders_that_speak_to_the_question() -> None:
    d = records_doc()
    everything = d.expand(4)
    # "1962" is in nodes 2, 3 and 5; node 2 shares the most topic words with the question.
    label = oracle_teacher(
        d, d.light([2, 3]), answers=["1962"], query="In what year were the most points scored in a game?"
    )
    assert label.answer_ids == (2,)
    assert gold_content_ids(d.nodes, answers=["100"], query="Most points in one game?") == {2}
    # without the question, every holder (the rule before precision mattered)
    assert gold_content_ids(d.nodes, answers=["1962"]) == {2, 3, 5}
    # the only visible holder is not the answering one: expand toward it, do not answer node 5
    assert oracle_teacher(d, everything, answers=["1962"], query="most points scored in a game").answer_ids == ()


def test_verdicts_are_not_spans_and_evidence_lines_come_first() -> None:
    d = records_doc()
    view = d.expand(4)
    # a yes/no verdict is no span: node 5 says "No" but is not evidence
    refused = oracle_teacher(d, view, answers=["no"], query="Did tickets cost more than a dollar?")
    assert refused.kind == "refuse"
    # with evidence lines, only they are gold; the short answer "100" elsewhere is a coincidence
    label = oracle_teacher(
        d, view, answers=["100"], evidences=["<p>Tickets cost 100 cents.</p>"], query="Ticket price?"
    )
    assert label.answer_ids == (6,)
    assert gold_content_ids(d.nodes, answers=["yes", "no"]) == frozenset()


# --- LLM teacher: recorded outputs ---------------------------------------------------------------
# In the view lit from node 2: visible content {2}; collapsed headings {4, 6}; heading 1's content
# is shown and heading 3 has no content of its own, so neither can be expanded.
RECORDED = [
    # (teacher output, answer ids, expand ids, target, invalid ids, failed)
    (
        'Sure! Here is my answer:\n```json\n{"answer": [2], "expand": [6]}\n```\nHope it helps.',
        (2,),
        (6,),
        "[ANSWER] 2: Charge the battery for 3\n[EXPAND] 6: Sound",
        0,
        False,
    ),
    (
        'The answer is {"answer": ["2: Charge the battery", 5, 99], "expand": [3, 4]}.',
        (2,),
        (4,),
        "[ANSWER] 2: Charge the battery for 3\n[EXPAND] 4: Display",
        3,
        False,
    ),
    ('{"answer": [], "expand": []}', (), (), "Cannot answer", 0, False),
    ("{'answer': [2], 'expand': []}", (2,), (), "[ANSWER] 2: Charge the battery for 3", 0, False),
    ('Example: {"note": 1} and then {"EXPAND": [4, 4]}', (), (4,), "[EXPAND] 4: Display", 0, False),
    (
        '{"answers": [{"id": 2, "text": "Charge"}], "expand": 6}',
        (2,),
        (6,),
        "[ANSWER] 2: Charge the battery for 3\n[EXPAND] 6: Sound",
        0,
        False,
    ),
    ('{"answer": [7], "expand": [1, "x"]}', (), (), "", 3, True),  # everything forbidden: failed, not refuse
    ("I think paragraph 2 answers it.", (), (), "", 0, True),
    ('{\n  "answer": [\n    {\n      "id": "2",', (), (), "", 0, True),  # cut off mid-JSON (max_new_tokens)
    ("", (), (), "", 0, True),
]


@pytest.mark.parametrize(("output", "answers", "expands", "target", "invalid", "failed"), RECORDED)
def test_llm_curation_outputs_are_parsed_and_validated(
    output: str, answers: tuple, expands: tuple, target: str, invalid: int, failed: bool
) -> None:
    d = doc()
    view = d.light([2])
    label = parse_curation_output(output, d, view)
    assert (label.answer_ids, label.expand_ids, label.target) == (answers, expands, target)
    assert (label.invalid_ids, label.failed, label.teacher, label.raw) == (invalid, failed, "llm", output)
    assert label.kind == ("failed" if failed else "answer" if answers else "expand" if expands else "refuse")
    # a usable label is a valid router target; a failed one has none (nothing the router could learn)
    decision = parse_router_output(label.target, view)
    assert (decision.expelled, decision.collapsed) == (0, failed)


def test_curation_prompt_names_the_ids_each_action_may_use() -> None:
    d = doc()
    view = d.light([2])
    [system, user] = curation_messages("How long to charge?", view.render(), view)
    assert '"answer"' in system["content"] and '"expand"' in system["content"]
    assert "Shown paragraph ids: 2\nHeadings with hidden paragraphs: 4, 6" in user["content"]
    assert "2: Charge the battery for 3 hours." in user["content"]


class CountingEngine(LLMEngine):
    """The real engine, counting its generate calls (the teacher must batch: one call)."""

    def __init__(self, inner: LLMEngine) -> None:
        self.inner, self.calls, self.model_id = inner, 0, inner.model_id

    def generate(self, batch: list[ChatMessages], **kwargs) -> list[Generation]:
        self.calls += 1
        return self.inner.generate(batch, **kwargs)

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)


def test_llm_teacher_with_the_real_small_model_is_batched_parsed_and_validated(smollm2_checkpoint: Path) -> None:
    from rag_assets.core.engines.transformers_engine import TransformersEngine

    engine = CountingEngine(TransformersEngine(smollm2_checkpoint, batch_size=4))
    tasks = []
    for query in ("How long should I charge the battery?", "How do I change the ringtone volume?"):
        d = doc()
        view = d.light([2])
        tasks.append(TeacherTask(query, d, view, view.render()))
    labels = llm_teacher(engine, tasks, max_new_tokens=24)
    assert engine.calls == 1 and len(labels) == 2
    for label, task in zip(labels, tasks):
        assert label.teacher == "llm" and label.raw  # the raw output is kept for audit
        assert set(label.answer_ids) <= task.view.visible_content_ids
        assert set(label.expand_ids) <= task.view.collapsed_heading_ids
        # failed or not, the stored target is what the router would be trained on: valid, or empty
        assert (label.target == "") == label.failed and (label.kind == "failed") == label.failed
        decision = parse_router_output(label.target, task.view)
        assert (decision.expelled, decision.collapsed) == (0, label.failed)


# --- similarity teacher --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def embedder():
    from rag_assets.core.index.embedding import Embedder

    return Embedder(progress=False)


def test_similarity_teacher_with_the_packaged_embedder(embedder) -> None:
    questions = {
        "How long should I charge the battery?": ((2,), (), "[ANSWER] 2: Charge the battery for 3"),
        "How do I turn on dark mode?": ((), (4,), "[EXPAND] 4: Display"),
        "How do I change the ringtone volume?": ((), (6,), "[EXPAND] 6: Sound"),
        "What is the capital of France?": ((), (), "Cannot answer"),
    }
    tasks = []
    for query in questions:
        d = doc()
        view = d.light([2])
        tasks.append(TeacherTask(query, d, view, view.render()))
    labels = similarity_teacher(embedder, tasks, SimilarityThresholds(answer=0.45, expand=0.40))
    assert [(label.answer_ids, label.expand_ids, label.target) for label in labels] == list(questions.values())
    assert all(label.teacher == "similarity" and label.raw.startswith("similarity answer>=0.45") for label in labels)
    # A threshold above every score refuses; one below every score takes the best few.
    [strict] = similarity_teacher(embedder, tasks[:1], SimilarityThresholds(answer=0.99, expand=0.99))
    assert strict.target == "Cannot answer"
    [loose] = similarity_teacher(embedder, tasks[:1], SimilarityThresholds(answer=-1.0, expand=-1.0, max_expands=1))
    assert (loose.answer_ids, loose.expand_ids) == ((2,), (4,))  # heading 4 (battery) beats 6 (ringtone)


def test_thresholds_are_calibrated_on_a_grid_with_exact_f1() -> None:
    scores = [
        SimilarityScores({2: 0.62, 9: 0.30}, {}),
        SimilarityScores({5: 0.41, 6: 0.22}, {4: 0.7}),
        SimilarityScores({8: 0.50}, {}),
    ]
    golds = [oracle_like((2,)), oracle_like((5,)), oracle_like(())]
    calibration = calibrate_thresholds(scores, golds)
    # t in (0.30, 0.41] predicts {2, 5, 8}: 2 hits of 3 predicted, 2 gold -> F1 0.8 (the best);
    # the lowest grid point there is 0.35. No gold EXPAND: the expand default is kept.
    assert calibration.thresholds.answer == 0.35 and calibration.answer_f1 == pytest.approx(0.8)
    assert calibration.thresholds.expand == SimilarityThresholds().expand and calibration.expand_f1 is None
    assert calibration.details["answer_f1@0.5"] == pytest.approx(0.5) and calibration.labelled == 3
    empty = calibrate_thresholds([], [])
    assert empty.thresholds == SimilarityThresholds() and empty.labelled == 0
    with pytest.raises(ValueError, match="2 scored views for 1 labels"):
        calibrate_thresholds(scores[:2], golds[:1])


def test_the_view_objective_calibrates_the_router_metric_and_the_answer_lines_per_view() -> None:
    scores = [
        SimilarityScores({2: 0.9, 3: 0.8}, {}),
        SimilarityScores({5: 0.7, 6: 0.6}, {}),
        SimilarityScores({8: 0.3}, {}),
    ]
    golds = [oracle_like((2,)), oracle_like((5,)), oracle_like(())]
    calibration = calibrate_thresholds(
        scores, golds, grid=(0.2, 0.5, 0.85), objective="view", answer_limits=(1, 2), default=SimilarityThresholds()
    )
    # One line per view above 0.5 answers exactly the gold of both answerable views and refuses the
    # third: ANS-F1 (mean per-view F1, as router_metrics scores it) 1.0. Two lines would halve precision.
    assert (calibration.thresholds.answer, calibration.thresholds.max_answers) == (0.5, 1)
    assert calibration.answer_f1 == 1.0
    assert calibration.details["answer_f1@0.2/1"] == pytest.approx(2 / 3, abs=1e-4)  # view 3 answered: F1 0 there
    assert calibration.details["answer_f1@0.5/2"] == pytest.approx(2 / 3, abs=1e-4)
    with pytest.raises(ValueError, match="objective"):
        calibrate_thresholds(scores, golds, objective="macro")


def test_the_view_objective_sets_the_expand_threshold_by_whole_decisions_refusals_included() -> None:
    # Views 1 and 4 should expand heading 4 and 3; views 2 and 3 should be refused, but heading 7
    # of view 3 scores above the right expand of view 4. Micro F1 of the expands alone does not
    # count refusals; the whole-decision objective does.
    scores = [
        SimilarityScores({2: 0.1}, {4: 0.7}),
        SimilarityScores({5: 0.1}, {}),
        SimilarityScores({8: 0.1}, {7: 0.5}),
        SimilarityScores({9: 0.1}, {3: 0.3, 6: 0.45}),
    ]
    golds = [oracle_like((), (4,)), oracle_like(()), oracle_like(()), oracle_like((), (3,))]
    grid = (0.2, 0.4, 0.6)
    micro = calibrate_thresholds(scores, golds, grid=grid)
    view = calibrate_thresholds(scores, golds, grid=grid, objective="view")
    # micro: 0.2 expands 4, 7, 3, 6 -> 2 hits of 4 predicted, 2 gold: F1 0.667, the best.
    assert micro.thresholds.expand == 0.2 and micro.expand_f1 == pytest.approx(2 / 3)
    # whole decisions: 0.2 -> views 1 (1.0), 2 (refused: 1.0), 3 (0), 4 (0.667) = 0.667; 0.6 ->
    # 1.0, 1.0, 1.0, 0 = 0.75: the refusals of view 3 win over half of view 4's expand.
    assert view.thresholds.expand == 0.6 and view.expand_f1 == pytest.approx(0.75)
    answered, expanded = [set(), set(), set(), set()], [{4}, set(), {7}, {3}]
    assert decision_f1(answered, expanded, golds) == pytest.approx((1 + 1 + 0 + 1) / 4)
    assert decision_f1([{2}], [set()], [oracle_like((2,), (4,))]) == pytest.approx(2 / 3)


def test_without_gold_expands_the_view_objective_never_expands() -> None:
    # The teacher answers view 1 and refuses view 2; it never expands. Heading scores of 0.5-0.7
    # lie above the default expand threshold (0.40): kept, it would expand both views.
    scores = [SimilarityScores({2: 0.8}, {4: 0.7}), SimilarityScores({5: 0.1}, {7: 0.5})]
    golds = [oracle_like((2,)), oracle_like(())]
    grid = (0.2, 0.5, 0.9)
    view = calibrate_thresholds(scores, golds, grid=grid, objective="view")
    assert view.thresholds.expand == 0.9 and view.expand_f1 == pytest.approx(1.0)
    assert (view.thresholds.answer, view.answer_f1) == (0.2, 1.0)
    micro = calibrate_thresholds(scores, golds, grid=grid)  # micro F1 has nothing to count: default
    assert micro.thresholds.expand == SimilarityThresholds().expand and micro.expand_f1 is None
    assert calibrate_thresholds([], [], objective="view").thresholds == SimilarityThresholds()


def oracle_like(answer_ids: tuple[int, ...], expand_ids: tuple[int, ...] = ()):
    from rag_assets.core.routing.teachers import TeacherLabel

    return TeacherLabel(answer_ids, expand_ids, "", "", "oracle")


def _sample(d: DocumentRouting, qid: str, query: str) -> RoutingSample:
    view = d.light([2])
    return RoutingSample(
        f"s-{qid}",
        qid,
        query,
        d.doc_id,
        "initial",
        view.render(),
        tuple(sorted(view.visible_content_ids)),
        tuple(sorted(view.collapsed_heading_ids)),
        tuple(sorted(d.seen)),
    )


def test_mix_uses_the_oracle_where_gold_exists_else_similarity_calibrated_on_the_oracle(embedder) -> None:
    d = doc()
    trees = {"phone": d.nodes}
    questions = {
        "g1": Question("g1", "How long should I charge the battery?", answers=("3 hours",)),
        "g2": Question("g2", "How do I turn on dark mode?", answers=("dark mode",)),
        "n1": Question("n1", "How do I change the ringtone volume?"),  # no gold: similarity
    }
    samples = [_sample(doc(), qid, q.query) for qid, q in questions.items()]
    curation = curate(samples, questions, trees, "mix", encoder=embedder, calibrate_on={"s-g1", "s-g2"})
    assert [label.teacher for label in curation.labels] == ["oracle", "oracle", "similarity"]
    assert [label.target for label in curation.labels] == [
        "[ANSWER] 2: Charge the battery for 3",
        "[EXPAND] 4: Display",
        "[EXPAND] 6: Sound",
    ]
    calibration = curation.calibration
    assert calibration is not None and calibration.labelled == 2
    assert calibration.answer_f1 == 1.0 and calibration.expand_f1 == 1.0  # separable on two views
    oracle_only = curate(samples, questions, trees, "oracle")
    assert oracle_only.calibration is None and oracle_only.labels[2].kind == "refuse"
    with pytest.raises(ValueError, match="not one of"):
        curate(samples, questions, trees, "teacher-x")
    with pytest.raises(ValueError, match="needs an engine"):
        curate(samples, questions, trees, "llm")


def _filing() -> DocumentRouting:
    """A filing's two statement pages and a risk page, as the PDF reader gives them (pages set)."""
    from rag_assets.core.corpus.blocks import BlockKind, new_block

    def on(page: int, block):
        return new_block(block.kind, block.text, block.level, page, page)

    tree = build_tree(
        "ADOBE 2015 10K",
        [
            on(3, heading("Risk Factors", 1)),  # 1
            on(3, paragraph("Our cash flow could suffer if operating costs rise.")),  # 2
            on(59, heading("Consolidated Balance Sheets", 1)),  # 3
            on(59, new_block(BlockKind.PARAGRAPH, "Cash and cash equivalents 876,560 1,117,400", 0)),  # 4
            on(59, new_block(BlockKind.PARAGRAPH, "Total current liabilities 2,213,556 1,779,614", 0)),  # 5
            on(61, heading("Consolidated Statements of Cash Flows", 1)),  # 6
            on(61, new_block(BlockKind.PARAGRAPH, "Net cash provided by operating activities 1,469,502", 0)),  # 7
            on(61, new_block(BlockKind.PARAGRAPH, "Purchases of property and equipment (184,936)", 0)),  # 8
        ],
    )
    return DocumentRouting("financebench/ADOBE_2015_10K.pdf", tree.nodes)


def test_gold_pages_label_the_rows_each_page_holds_for_the_question() -> None:
    """FinanceBench's evidence text is a whole page extracted by another tool: it matches no node,
    so the gold pages label: on each, the rows sharing the most topic words with the question."""
    d = _filing()
    query = "What is the FY2015 operating cash flow ratio: cash from operating activities / total current liabilities?"
    page_text = "59 ADOBE SYSTEMS INCORPORATED CONSOLIDATED BALANCE SHEETS (In thousands) Cash and cash equivalents..."
    assert gold_content_ids(d.nodes, evidences=[page_text], query=query, pages=[59, 61]) == {5, 7}
    # without pages (a document that is not the gold one) the page text labels nothing
    assert gold_content_ids(d.nodes, evidences=[page_text], query=query) == frozenset()
    question = Question(
        qid="q1", query=query, answers=("0.66",), evidences=(page_text,), gold_doc="ADOBE_2015_10K", gold_pages=(59, 61)
    )
    # the cash flow statement shown: answer its row, expand the balance sheet for the other one
    label = oracle_label(d, d.expand(6), question)
    assert (label.answer_ids, label.expand_ids) == ((7,), (3,))
    # another filing of the collection is no gold document for it: its pages 59 and 61 are not gold
    other = DocumentRouting("financebench/ADOBE_2016_10K.pdf", d.nodes)
    assert oracle_label(other, other.expand(6), question).kind == "refuse"
