"""`router_adapter`: the trained routers of a collection (`router_metrics` scores them).

Two router kinds learn from the same curated routing actions (train fold):
- `encoder`: the packaged sentence encoder fine-tuned on (question, node in its heading context)
  pairs, thresholds calibrated on the validation fold (`core/routing/encoder_training.py`); trains in
  minutes on CPU. Its untrained counterpart is the `similarity` router (the packaged encoder,
  thresholds calibrated on the train fold).
- `llm`: the paper's LoRA adapter (peft SFT, loss on the target tokens only) on the base LLM; the
  path for GPU users with 1.5-8B models. Its untrained counterpart is the base model.
Each trained router is published atomically under a content id; each materialization replaces the collection's router rows of `published_models` (ids, folders,
the similarity thresholds), and every answering user reads exactly those (the ones the latest
materialization produced) through `load_published`.
"""

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import asdict

import dagster as dg
from dagster_duckdb import DuckDBResource

from rag_assets.core.answering.policy.catalogue import BUDGET_SOURCE, DEFAULT_SETTINGS, strategy_specs
from rag_assets.core.answering.published import load_published
from rag_assets.core.answering.session import AnsweringSession
from rag_assets.core.evaluation.held_out_evidence import HeldOutEvidence, held_out_evidence
from rag_assets.core.figures import figure, png_bytes, png_markdown
from rag_assets.core.index.embedding import Embedder
from rag_assets.core.routing.action_format import routing_messages
from rag_assets.core.routing.encoder_settings import EncoderSettings
from rag_assets.core.routing.encoder_training import EncoderTrainingResult
from rag_assets.core.routing.held_out_routing import LabelledView, calibrate_similarity, load_routing_examples
from rag_assets.core.routing.router_training import train_encoder_router
from rag_assets.core.routing.samples import SYNTHETIC_QID_PREFIX
from rag_assets.core.routing.teachers import SimilarityThresholds
from rag_assets.core.store.published_models import PublishedModel, publish_models
from rag_assets.core.store.question_table import load_question_rows
from rag_assets.core.store.tree_tables import load_trees
from rag_assets.core.training.lora import LoraSettings, TrainingExample, train_lora
from rag_assets.defs.deployment import CATALOGUE_POOL, GPU_STEP_TAGS, TRANSIENT_RETRY
from rag_assets.defs.metadata import PLOT_COLOUR, line_plot_markdown, markdown_table
from rag_assets.defs.partitions import collection_partitions
from rag_assets.defs.routing.router_config import RouterKind, RouterTrainingConfig
from resources.embedder import EmbedderResource
from resources.llm import BaseModelResource
from resources.session_models import ResourceModels
from resources.vectors import VectorStoreResource

# the kinds one router_adapter materialization publishes, replacing the previous ones together
ROUTER_PIECES = ("encoder", "llm", "similarity")


@dg.asset(
    pool=CATALOGUE_POOL,
    retry_policy=TRANSIENT_RETRY,
    op_tags=GPU_STEP_TAGS,
    partitions_def=collection_partitions,
    deps=["routing_actions", "passage_index"],
    group_name="routing",
    kinds={"pytorch", "python"},
    description="The collection's trained routers: the encoder node scorer (fine-tuned MiniLM, thresholds "
    "calibrated on the validation fold) and the LLM LoRA adapter (peft SFT, loss on target tokens only), "
    "each published atomically under a content id, with training curves and the calibration table.",
)
def router_adapter(
    context: dg.AssetExecutionContext,
    config: RouterTrainingConfig,
    catalogue: DuckDBResource,
    base_model: BaseModelResource,
    embedder: EmbedderResource,
    vectors: VectorStoreResource,
) -> dg.MaterializeResult:
    collection = context.partition_key
    with catalogue.get_connection() as con:
        train = load_routing_examples(con, collection, fold="train", synthetic=config.use_synthetic)
        validation = load_routing_examples(con, collection, fold="validation", synthetic=config.use_synthetic)
        held_out = None
        if RouterKind.encoder in config.kinds and config.encoder_held_out_evidence:
            held_out = validation_evidence(context, con, collection, validation, ResourceModels(embedder, vectors))
    if not train:
        return _publish_untrained(context, catalogue, collection)
    metadata = _views_metadata(config, train, validation)
    records: dict[str, TrainedRouter] = {}
    encoder = embedder.get()
    # The untrained encoder's thresholds (the similarity router), calibrated on the train fold.
    similarity = calibrate_similarity(encoder, [e.example for e in train])
    metadata.update(
        {
            "similarity_answer_threshold": similarity.answer,
            "similarity_expand_threshold": similarity.expand,
        }
    )
    folds = _Folds(collection, train, validation)
    if RouterKind.encoder in config.kinds:
        records["encoder"], trained = _train_encoder_router(
            context, config, base_model, encoder, folds, held_out, similarity
        )
        metadata.update(trained)
    if RouterKind.llm in config.kinds:
        records["llm"], trained = _train_llm_router(context, config, base_model, folds)
        metadata.update(trained)
    with catalogue.get_connection() as con:
        publish_models(con, collection, published_routers(records, similarity, context.run.run_id), kinds=ROUTER_PIECES)
    version = "+".join(r.adapter_id for r in records.values()) or "untrained"
    return dg.MaterializeResult(data_version=dg.DataVersion(version), metadata=metadata)


@dataclasses.dataclass(frozen=True)
class TrainedRouter:
    """One router this step trained: its content id, the folder it was published to, and what it
    was trained from (the embedder or the base LLM)."""

    adapter_id: str
    path: str
    base_model: str


@dataclasses.dataclass(frozen=True)
class _Folds:
    """A collection's labelled routing views, train and validation folds."""

    collection: str
    train: list[LabelledView]
    validation: list[LabelledView]


def _publish_untrained(
    context: dg.AssetExecutionContext, catalogue: DuckDBResource, collection: str
) -> dg.MaterializeResult:
    """Publish the similarity router alone (no training routing actions), logged."""
    reason = "no training routing actions"
    context.log.warning(f"{collection}: {reason} (no train questions?); no router trained")
    with catalogue.get_connection() as con:
        publish_models(
            con,
            collection,
            [PublishedModel("similarity", details={"reason": reason}, run_id=context.run.run_id)],
            kinds=ROUTER_PIECES,
        )
    return dg.MaterializeResult(metadata={"trained": False, "reason": reason})


def _views_metadata(
    config: RouterTrainingConfig, train: list[LabelledView], validation: list[LabelledView]
) -> dict[str, object]:
    """What the routers train on: kinds, and views per fold and source."""
    synthetic = sum(e.qid.startswith(SYNTHETIC_QID_PREFIX) for e in train)
    return {
        "trained": True,
        "kinds": ", ".join(map(str, config.kinds)),
        "train_views": len(train),
        "validation_views": len(validation),
        "train_views_synthetic": synthetic,
        "train_views_labelled": len(train) - synthetic,
    }


def _step_logger(context: dg.AssetExecutionContext, kind: str) -> Callable[[int, int, float], None]:
    """A training-step callback logging the first, the last and every tenth step's loss."""

    def log(step: int, total: int, loss: float) -> None:
        if step == 1 or step == total or step % 10 == 0:
            context.log.info(f"{kind} router: step {step}/{total} loss {loss:.4f}")

    return log


def _train_encoder_router(
    context: dg.AssetExecutionContext,
    config: RouterTrainingConfig,
    base_model: BaseModelResource,
    encoder: Embedder,
    folds: _Folds,
    held_out: HeldOutEvidence | None,
    similarity: SimilarityThresholds,
) -> tuple[TrainedRouter, dict[str, object]]:
    """Fine-tune the encoder router: what was trained, and its metadata."""
    settings = config.encoder_settings()
    trained = train_encoder_router(
        encoder,
        folds.train,
        folds.validation,
        base_model.adapters_dir(),
        settings,
        real_weight=config.encoder_real_weight,
        held_out=held_out,
        on_step=_step_logger(context, "encoder"),
        extra_record={
            "collection": folds.collection,
            "similarity_thresholds": asdict(similarity),
            "real_weight": config.encoder_real_weight,
        },
    )
    result = trained.result
    record = TrainedRouter(result.adapter_id, str(result.folder), encoder.model_id)
    metadata = encoder_metadata(result, settings, held_out)
    metadata["encoder_real_weight"] = config.encoder_real_weight
    metadata["encoder_ancestor_levels"] = settings.ancestor_levels
    metadata["encoder_train_views"] = trained.train_views
    return record, metadata


def _lora_settings(config: RouterTrainingConfig) -> LoraSettings:
    """The LoRA training settings of the config."""
    return LoraSettings(
        rank=config.rank,
        alpha=config.alpha,
        dropout=config.dropout,
        target_modules=list(config.target_modules),
        learning_rate=config.learning_rate,
        epochs=config.epochs,
        max_steps=config.max_steps,
        batch_size=config.batch_size,
        max_length=config.max_length,
    )


def _train_llm_router(
    context: dg.AssetExecutionContext,
    config: RouterTrainingConfig,
    base_model: BaseModelResource,
    folds: _Folds,
) -> tuple[TrainedRouter, dict[str, object]]:
    """Train the LLM router's LoRA adapter: what was trained, and its metadata."""
    examples = [TrainingExample(routing_messages(e.query, e.rendered), e.target) for e in folds.train]
    model_path = base_model.path()
    lora = train_lora(
        model_path,
        examples,
        base_model.adapters_dir(),
        _lora_settings(config),
        device=base_model.device,
        on_step=_step_logger(context, "llm"),
    )
    record = TrainedRouter(lora.adapter_id, str(lora.adapter_dir), str(model_path))
    return record, {
        "adapter_id": lora.adapter_id,
        "path": str(lora.adapter_dir),
        "examples": lora.trained_examples,
        "steps": lora.steps,
        "seconds_per_step": round(lora.seconds_per_step, 3),
        "device": lora.device,
        "dtype": lora.dtype,
        "first_loss": round(lora.losses[0], 4),
        "last_loss": round(lora.losses[-1], 4),
        "loss_curve": dg.MetadataValue.md(
            line_plot_markdown(lora.losses, title="LLM router loss", xlabel="step", ylabel="loss")
        ),
    }


def encoder_metadata(
    result: EncoderTrainingResult, settings: EncoderSettings, held_out: HeldOutEvidence | None
) -> dict[str, object]:
    """The encoder router's training, in the UI: ids, losses, the calibration curve and every section
    weight tried."""
    metadata: dict[str, object] = {}
    cal = result.calibration
    # the F1 each chosen threshold reaches (none where no view has that gold action)
    for action, f1 in (("answer", cal.answer_f1), ("expand", cal.expand_f1)):
        if f1 is not None:
            metadata[f"encoder_{action}_f1"] = round(f1, 4)
    metadata.update(
        {
            "encoder_adapter_id": result.adapter_id,
            "encoder_path": str(result.folder),
            "encoder_pairs": result.pairs,
            "encoder_steps": result.steps,
            "encoder_seconds_per_step": round(result.seconds_per_step, 3),
            "encoder_first_loss": round(result.losses[0], 4),
            "encoder_last_loss": round(result.losses[-1], 4),
            "encoder_answer_threshold": cal.thresholds.answer,
            "encoder_expand_threshold": cal.thresholds.expand,
            "encoder_calibration_views": cal.labelled,
            "encoder_calibration": dg.MetadataValue.md(
                calibration_curve_markdown(
                    cal.details,
                    {"ANSWER": cal.thresholds.answer, "EXPAND": cal.thresholds.expand},
                    max_answers=cal.thresholds.max_answers,
                    title=f"encoder router calibration ({cal.labelled} {result.calibrated_on} views)",
                )
            ),
            "encoder_section_weight": result.section_weight,
            "encoder_section_chosen_by": result.section_chosen_by,
            "encoder_fill_order": result.fill_order,
            "encoder_node_text": result.node_text,
            "encoder_own_choices": str(result.own_choices.chosen) if result.own_choices else "threshold",
            "encoder_section_weights": dg.MetadataValue.md(_section_weights_table(result, settings, held_out)),
            "encoder_loss_curve": dg.MetadataValue.md(
                line_plot_markdown(result.losses, title="encoder router loss", xlabel="step", ylabel="loss")
            ),
        }
    )
    return metadata


def _section_weights_table(
    result: EncoderTrainingResult, settings: EncoderSettings, held_out: HeldOutEvidence | None
) -> str:
    """Every section weight (node text, fill order) the encoder training tried, with its scores."""
    return markdown_table(
        [
            "section weight",
            "node text",
            "budget fill order",
            f"gold ANSWER nodes kept in {'/'.join(map(str, settings.section_budgets))} words "
            f"({result.calibrated_on} views)",
            f"routed evidence ({held_out.metric}, {len(held_out.questions)} validation questions)"
            if held_out
            else "routed evidence (no held-out questions)",
            f"ANS-F1 ({result.calibrated_on} views, calibrated)",
            "chosen",
        ],
        [
            (
                t.weight,
                t.node_text,
                t.fill_order,
                t.budget_recall,
                _maybe(t.routed_evidence),
                _maybe(t.answer_f1),
                "yes"
                if (t.weight, t.fill_order, t.node_text) == (result.section_weight, result.fill_order, result.node_text)
                else "",
            )
            for t in result.section_weights
        ],
    )


def published_routers(
    records: Mapping[str, TrainedRouter], similarity: SimilarityThresholds, run_id: str
) -> list[PublishedModel]:
    """The rows `published_models` gets from one training: each trained router's folder, and the
    similarity router's thresholds."""
    thresholds = {"answer": similarity.answer, "expand": similarity.expand}
    return [
        *(
            PublishedModel(kind, r.adapter_id, r.path, {"base_model": r.base_model}, run_id=run_id)
            for kind, r in records.items()
        ),
        PublishedModel("similarity", details=thresholds, run_id=run_id),
    ]


def validation_evidence(
    context: dg.AssetExecutionContext,
    con,
    collection: str,
    validation: list[LabelledView],
    models: ResourceModels,
) -> HeldOutEvidence | None:
    """The validation fold's real questions, retrieved as `answers` retrieves them (through the
    answering session, at the LanceDB version published with the catalogue's passages) and routed
    as its default `rdr2` row routes, with rag-hybrid's words as the budget: what the encoder's
    section weight is chosen by. None (logged) when the fold has no real question or the
    collection no published index."""
    qids = {v.qid for v in validation if not v.qid.startswith(SYNTHETIC_QID_PREFIX)}
    questions = [q for q in load_question_rows(con, collection) if q.qid in qids]
    published = load_published(con, collection)
    if not questions or published.index.version is None:
        reason = "no real validation question" if not questions else "no published passage index"
        context.log.info(f"{collection}: {reason}; the section weight is chosen by gold nodes kept in word budgets")
        return None
    trees = {doc_id: nodes for doc_id, (nodes, _) in load_trees(con, collection).items()}
    session = AnsweringSession(published, models, trees)
    specs = strategy_specs(DEFAULT_SETTINGS, "short", None)
    routed = dataclasses.replace(specs["rdr2"], router=RouterKind.encoder.value, evidence_budget_from=None)
    return held_out_evidence(
        questions, baseline=specs[BUDGET_SOURCE], routed=routed, retrieve=session.retrieve, trees=trees
    )


def _maybe(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


# calibration grid entries: "<answer|expand>_f1@<threshold>[/<ANSWER lines per view>]"
_GRID_KEY = re.compile(r"^(answer|expand)_f1@(-?[\d.]+(?:e-?\d+)?)(?:/(\d+))?$")


def calibration_curve_markdown(
    details: Mapping[str, float], chosen: Mapping[str, float], *, max_answers: int, title: str
) -> str:
    """The calibration grid as a plot (F1 of each action's decisions against its threshold, ANSWER
    at the chosen lines per view; a dashed line at each chosen threshold), as an inline PNG."""
    curves: dict[str, list[tuple[float, float]]] = {"ANSWER": [], "EXPAND": []}
    for key, f1 in details.items():
        match = _GRID_KEY.match(key)
        if match and (match.group(3) is None or int(match.group(3)) == max_answers):
            curves[match.group(1).upper()].append((float(match.group(2)), float(f1)))
    with figure(5, 2.6) as (fig, ax):
        for (action, points), style in zip(curves.items(), ("-", ":")):
            if points:
                xs, ys = zip(*sorted(points))
                ax.plot(xs, ys, style, color=PLOT_COLOUR, label=f"{action} (chosen {chosen[action]:g})")
                ax.axvline(chosen[action], linestyle="--", color="grey", linewidth=0.8)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("threshold (cosine)", fontsize=9)
        ax.set_ylabel("F1", fontsize=9)
        ax.legend(fontsize=8)
    return png_markdown(png_bytes(fig), title)
