"""routing_actions with every teacher, router_adapter's registry rows (encoder and LLM routers) and
router_metrics (each kind against its untrained counterpart) materialized for real with Dagster:
DuckDB and LanceDB in tmp_path, the packaged embedder and the real SmolLM2 (tiny settings: 2
training steps, a few validation samples)."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from rag_assets.core.routing.encoder_training import load_encoder_router
from rag_assets.core.routing.own_choices import MARGINS, OwnChoices
from rag_assets.core.store.published_models import published_models
from rag_assets.definitions import ALL_ASSETS, ALL_CHECKS
from tests.conftest import tiny_project

# All train questions; with validation_fraction 0.5 the routing fold puts charger, ice and tide in
# validation. "ice" has no gold answer, so the mix teacher labels it with the similarity teacher.
QUESTIONS = [
    {"qid": "tea", "question": "How hot should the water be for green tea?", "answers": ["80 C"]},
    {"qid": "fill", "question": "What is the maximum amount of water in the kettle?", "answers": ["1.7 litres"]},
    {"qid": "pond", "question": "How do I clean the pond filter?", "answers": ["rinse the sponge"]},
    {"qid": "pharos", "question": "When was the Pharos of Alexandria built?", "answers": ["280 BC"]},
    {"qid": "pass", "question": "What does the pass statement do?", "answers": ["null operation"]},
    {"qid": "charger", "question": "Which charger should I use for the battery?", "answers": ["supplied charger"]},
    {"qid": "ice", "question": "Why keep a hole in the ice of the pond in winter?"},
    {"qid": "tide", "question": "How many high tides are there each day?", "answers": ["two high tides"]},
]
UPSTREAM = (
    "source_documents",
    "document_trees",
    "passages",
    "passage_index",
    "questions",
    "synthetic_questions",
    "routing_subtrees",
)
METRIC_COLUMNS = "model, samples, ans_f1, exp_pre, ref_acc, expelled_per_output, collapsed_rate, parse_failure_rate"


@pytest.fixture
def project(tmp_path: Path, corpus_dir: Path, smollm2_checkpoint: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "data"))  # adapters are written under it
    return tiny_project(
        tmp_path,
        corpus_dir,
        smollm2_checkpoint,
        "".join(json.dumps({**q, "split": "train"}) + "\n" for q in QUESTIONS),
        llm_batch_size=8,
    )


def _materialize(project: dict, *keys: str, ops: dict | None = None) -> dg.ExecuteInProcessResult:
    result = dg.materialize(
        [*ALL_ASSETS, *ALL_CHECKS],
        resources=project["resources"],
        partition_key="tiny",
        instance=project["instance"],
        selection=dg.AssetSelection.assets(*keys),
        # No synthetic questions unless a test asks for them: the tiny corpus' labelled ones suffice.
        run_config={
            "ops": {
                k: {"config": v} for k, v in {"synthetic_questions": {"count": 0}, **(ops or {})}.items() if k in keys
            }
        },
    )
    assert result.success
    return result


def _meta(result: dg.ExecuteInProcessResult) -> dict[str, dict]:
    return {
        m.asset_key.to_user_string(): {k: v.value for k, v in m.materialization.metadata.items()}
        for m in result.get_asset_materialization_events()
    }


def _checks(result: dg.ExecuteInProcessResult) -> dict:
    return {e.check_name: e for e in result.get_asset_check_evaluations()}


@pytest.mark.timeout(1800)  # two routers trained and four scored on 2 shared CPU cores
def test_mix_teacher_adapter_and_router_metrics_base_vs_adapter(project: dict) -> None:
    teacher = {"teacher": "mix", "validation_fraction": 0.5}
    metrics = {"max_samples": 3, "max_new_tokens": 16}
    first = _materialize(
        project,
        *UPSTREAM,
        "routing_actions",
        "router_metrics",
        ops={"routing_actions": teacher, "router_metrics": metrics, "synthetic_questions": {"count": 0}},
    )
    actions = _meta(first)["routing_actions"]
    assert actions["ANS"] + actions["EXP"] + actions["REF"] == actions["dagster/row_count"] and actions["failed"] == 0
    assert actions["teacher_parse_failure_rate"] == 0.0
    assert "| fold | ANS | EXP | REF | failed | total |" in actions["actions"]
    assert 0.0 <= actions["similarity_answer_threshold"] <= 1.0  # calibrated on the train fold's oracle labels
    checks = _checks(first)
    assert checks["routing_targets_are_valid"].passed and checks["teacher_failure_rate_bounded"].passed
    with duckdb.connect(str(project["db"])) as con:
        teachers = dict(
            con.execute("SELECT qid, list_distinct(list(teacher)) FROM routing_actions GROUP BY 1").fetchall()
        )
        validation = con.execute("SELECT count(*) FROM routing_actions WHERE fold = 'validation'").fetchone()[0]
        base_only = con.execute(
            f"SELECT {METRIC_COLUMNS} FROM router_metrics WHERE collection = 'tiny' ORDER BY model"
        ).fetchall()
    assert teachers["ice"] == ["similarity"] and teachers["tea"] == ["oracle"]
    # No router trained yet: the untrained LLM and the untrained encoder (similarity) are scored,
    # and the check warns.
    assert [r[:2] for r in base_only] == [("base", min(3, validation)), ("similarity", validation)]
    assert all(0.0 <= v <= 1.0 for v in base_only[0][2:5] + base_only[0][6:])
    check = checks["router_adapter_beats_base"]
    assert check.severity == dg.AssetCheckSeverity.WARN and not check.passed
    assert check.metadata["no_adapter"].value == "tiny"

    training = {"kinds": ["encoder", "llm"], "max_steps": 2, "batch_size": 2, "max_length": 512}
    training |= {"encoder_epochs": 1, "encoder_max_steps": 0, "encoder_batch_size": 4, "encoder_real_weight": 2}
    training |= {"encoder_ancestor_levels": 1}
    second = _materialize(
        project,
        "router_adapter",
        "router_metrics",
        ops={"router_adapter": training, "router_metrics": metrics},
    )
    meta = _meta(second)
    adapter = meta["router_adapter"]
    with duckdb.connect(str(project["db"])) as con:
        published = published_models(con, "tiny")
        rows = con.execute(
            f"SELECT {METRIC_COLUMNS} FROM router_metrics WHERE collection = 'tiny' ORDER BY model"
        ).fetchall()
    embedder_id = project["resources"]["embedder"].get().model_id
    # what answering reads: each trained router's id, folder and what it was trained from
    trained = {
        kind: (m.model_id, m.path, m.details["base_model"])
        for kind, m in published.items()
        if kind in ("encoder", "llm")
    }
    assert trained == {
        "encoder": (adapter["encoder_adapter_id"], adapter["encoder_path"], embedder_id),
        "llm": (adapter["adapter_id"], adapter["path"], str(project["resources"]["base_model"].path())),
    }
    assert adapter["encoder_adapter_id"].startswith("enc-") and Path(adapter["encoder_path"], "router.json").is_file()
    # encoder_real_weight 2: every real question's view trains twice (no synthetic ones here)
    assert adapter["train_views_synthetic"] == 0 and adapter["encoder_real_weight"] == 2
    assert adapter["encoder_train_views"] == 2 * adapter["train_views"] > 0
    assert json.loads(Path(adapter["encoder_path"], "router.json").read_text())["real_weight"] == 2
    # encoder_ancestor_levels 1: trained and recorded with one content ancestor per node
    assert adapter["encoder_ancestor_levels"] == 1
    assert json.loads(Path(adapter["encoder_path"], "router.json").read_text())["ancestor_levels"] == 1
    # the calibration curve and the loss curves are plots (inline PNGs), the chosen F1s numbers
    assert adapter["encoder_calibration"].startswith("![encoder router calibration (")
    assert "](data:image/png;base64," in adapter["encoder_calibration"] and adapter["encoder_pairs"] > 0
    assert adapter["encoder_loss_curve"].startswith("![encoder router loss](data:image/png;base64,")
    assert 0.0 < adapter["encoder_answer_f1"] <= 1.0
    assert "| yes |" in adapter["encoder_section_weights"] and adapter["encoder_section_weight"] >= 0
    # The index is there and the validation fold has real questions (charger, ice, tide): the
    # weight is chosen by their routed evidence.
    assert adapter["encoder_section_chosen_by"].startswith("routed passage_hit of 3 held-out questions")
    assert "routed evidence (passage_hit, 3 validation questions)" in adapter["encoder_section_weights"]
    # ... and so is the rule of its own choices (a margin under each question's best node), tried
    # on the same 3 held-out questions over every (section weight, margin) of the grid
    own = json.loads(Path(adapter["encoder_path"], "router.json").read_text())["own_choices"]
    assert (own["metric"], own["questions"]) == ("passage_hit", 3)
    weights = sorted({3.0, 4.0, 6.0, adapter["encoder_section_weight"]})
    assert [(t["section_weight"], t["margin"]) for t in own["trials"]] == [(w, m) for w in weights for m in MARGINS]
    chosen = own["chosen"]
    assert chosen is not None, f"no (section weight, margin) within the word target: {own['trials']}"
    assert chosen["margin"] in MARGINS and chosen["section_weight"] in weights, chosen
    # the router loads with the rule router.json records, and the asset's metadata names the same
    assert load_encoder_router(Path(adapter["encoder_path"])).own_choices == OwnChoices(**chosen)
    assert adapter["encoder_own_choices"] == str(OwnChoices(**chosen))
    # The collection's rows were replaced: one row per model; the LLM rows on the same samples.
    assert [r[:2] for r in rows] == [
        ("adapter", min(3, validation)),
        ("adapter-rank", min(3, validation)),
        ("base", min(3, validation)),
        ("encoder", validation),
        ("similarity", validation),
    ]
    by_model = {r[0]: dict(zip(METRIC_COLUMNS.split(", "), r)) for r in rows}
    assert by_model["base"] == dict(zip(METRIC_COLUMNS.split(", "), base_only[0]))  # greedy: base is reproducible
    assert meta["router_metrics"]["adapter_id"] == adapter["adapter_id"]
    assert meta["router_metrics"]["encoder_adapter_id"] == adapter["encoder_adapter_id"]
    assert all(f"| {m} |" in meta["router_metrics"]["metrics"] for m in ("adapter", "base", "encoder", "similarity"))
    # Each rate with what it rests on: ANS-F1's interval brackets it, its views are the validation
    # views where the gold or the router answers.
    assert "ANS-F1 95% interval" in meta["router_metrics"]["metrics"]
    low, high = map(float, meta["router_metrics"]["encoder/ans_f1_interval"].split("-"))
    assert low - 5e-4 <= by_model["encoder"]["ans_f1"] <= high + 5e-4  # printed to 3 decimals
    assert 0 <= meta["router_metrics"]["encoder/ans_f1_views"] <= validation
    # The check judges the default kind (the encoder), now trained, against its untrained counterpart.
    check = _checks(second)["router_adapter_beats_base"]
    assert check.severity == dg.AssetCheckSeverity.WARN and check.metadata["router_kind"].value == "encoder"
    assert check.metadata["no_adapter"].value == "none"
    assert check.passed == (check.metadata["not_better"].value == "none")

    # The check's verdict on the catalogue's rows, with figures chosen by hand: run alone, it reads
    # the collection router_metrics last materialized.
    def check_alone(encoder: tuple[float, float], similarity: tuple[float, float]) -> dg.AssetCheckEvaluation:
        with duckdb.connect(str(project["db"])) as con:
            for model, (ans_f1, ref_acc) in (("encoder", encoder), ("similarity", similarity)):
                con.execute(
                    "UPDATE router_metrics SET ans_f1 = ?, ref_acc = ? WHERE collection = 'tiny' AND model = ?",
                    [ans_f1, ref_acc, model],
                )
        result = dg.materialize(
            [*ALL_ASSETS, *ALL_CHECKS],
            resources=project["resources"],
            instance=project["instance"],
            selection=dg.AssetSelection.checks(
                dg.AssetCheckKey(dg.AssetKey("router_metrics"), "router_adapter_beats_base")
            ),
        )
        [evaluation] = result.get_asset_check_evaluations()
        return evaluation

    better = check_alone(encoder=(0.6, 0.9), similarity=(0.4, 0.9))  # better on ANS-F1, equal on REF-ACC
    assert better.passed and better.metadata["not_better"].value == "none"
    assert (better.metadata["ans_f1_delta"].value, better.metadata["ref_acc_delta"].value) == (0.2, 0.0)
    trade_off = check_alone(encoder=(0.9, 0.2), similarity=(0.4, 0.5))  # better on one, worse on the other
    assert not trade_off.passed and trade_off.metadata["not_better"].value == "tiny"
    assert (trade_off.metadata["ans_f1_delta"].value, trade_off.metadata["ref_acc_delta"].value) == (0.5, -0.3)


def test_llm_teacher_through_the_llm_resource(project: dict) -> None:
    small = {"top_docs": 1, "expansion_views": 0}  # few subtrees: the real model labels each one
    result = _materialize(
        project,
        *UPSTREAM,
        "routing_actions",
        ops={"routing_subtrees": small, "routing_actions": {"teacher": "llm", "llm_max_new_tokens": 16}},
    )
    actions = _meta(result)["routing_actions"]
    with duckdb.connect(str(project["db"])) as con:
        rows = con.execute("SELECT teacher, kind, target, raw FROM routing_actions").fetchall()
        subtrees = con.execute("SELECT count(*) FROM routing_subtrees").fetchone()[0]
    assert len(rows) == subtrees == actions["dagster/row_count"] > 0
    failed = sum(r[1] == "failed" for r in rows)
    assert actions["failed"] == failed and actions["teacher_parse_failure_rate"] == pytest.approx(
        round(failed / len(rows), 4)
    )
    assert all(r[0] == "llm" and r[3] for r in rows)  # every raw output kept
    assert all((r[2] == "") == (r[1] == "failed") for r in rows)
    checks = _checks(result)
    assert checks["routing_targets_are_valid"].passed  # failed labels are excluded, the rest validated
    assert checks["teacher_failure_rate_bounded"].metadata["failed"].value == failed


def test_synthetic_questions_train_the_router_and_are_counted(project: dict) -> None:
    result = _materialize(
        project,
        *UPSTREAM,
        "routing_actions",
        ops={"synthetic_questions": {"count": 6}, "routing_actions": {"teacher": "oracle", "validation_fraction": 0.5}},
    )
    meta = _meta(result)
    made = meta["synthetic_questions"]
    # The tiny corpus has few paragraphs long enough for a cloze sentence: up to 6 are made.
    assert 0 < made["dagster/row_count"] <= 6 and "| heading |" in made["by_kind"]
    subtrees = meta["routing_subtrees"]
    assert subtrees["questions_synthetic"] == made["dagster/row_count"]
    assert subtrees["questions_labelled"] == len(QUESTIONS)
    with duckdb.connect(str(project["db"])) as con:
        synthetic = con.execute(
            "SELECT fold, kind, count(*) FROM routing_actions WHERE qid LIKE 'synthetic:%' GROUP BY ALL"
        ).fetchall()
    # Synthetic questions always train (thresholds are calibrated on real questions), and the oracle
    # finds their gold node or section in most of their views.
    assert {fold for fold, _, _ in synthetic} == {"train"}
    assert sum(n for _, kind, n in synthetic if kind in ("answer", "expand")) > 0
    assert "train / synthetic" in meta["routing_actions"]["views_by_source"]


def test_named_documents_build_each_questions_views_within_the_documents_it_names(project: dict) -> None:
    _materialize(project, *UPSTREAM)

    def documents_viewed() -> dict[str, set[str]]:
        with duckdb.connect(str(project["db"])) as con:
            rows = con.execute("SELECT qid, doc_id FROM routing_subtrees").fetchall()
        found: dict[str, set[str]] = {}
        for qid, doc_id in rows:
            found.setdefault(qid, set()).add(doc_id)
        return found

    whole = documents_viewed()
    assert len(whole["pond"]) > 1  # searched in the whole collection, the pond question sees other pages too
    result = _materialize(project, "routing_subtrees", ops={"routing_subtrees": {"named_documents": ["tiny"]}})
    named = documents_viewed()
    # "pond" and "pass" name a file; "tea" names none and keeps the whole collection's documents
    assert named["pond"] == {"tiny/pond.html"}
    assert named["ice"] == {"tiny/pond.html"}
    assert named["pass"] == {"tiny/pass.txt"}
    assert named["tea"] == whole["tea"]
    assert _meta(result)["routing_subtrees"]["named_documents"] is True


def test_unknown_teacher_fails_clearly(project: dict) -> None:
    # The launchpad's enum rejects it before the run starts.
    with pytest.raises(dg.DagsterInvalidConfigError, match="oracle2"):
        _materialize(project, "routing_actions", ops={"routing_actions": {"teacher": "oracle2"}})


def test_adapter_is_better_only_when_not_worse_on_both_and_better_on_one() -> None:
    from checks.router import adapter_beats_base

    base = {"ans_f1": 0.4, "ref_acc": 0.5}
    assert adapter_beats_base(base, {"ans_f1": 0.6, "ref_acc": 0.5})
    assert not adapter_beats_base(base, {"ans_f1": 0.4, "ref_acc": 0.5})  # equal is not better
    assert not adapter_beats_base(base, {"ans_f1": 0.9, "ref_acc": 0.2})  # a trade-off is not better
    assert not adapter_beats_base(base, None)
