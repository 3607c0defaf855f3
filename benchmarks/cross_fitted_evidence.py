"""The evidence table over EVERY labelled question of a collection, each question measured with an
encoder router that never saw it (k-fold cross-fitting), from a materialized catalogue.

    DAGSTER_HOME=/tmp/h RAG_DATA_DIR=dagster_home/data-datasets RAG_COLLECTIONS=collections.datasets.yaml \\
    RAG_DATA=$PWD/../shared/datasets \\
        .venv/bin/python -m benchmarks.cross_fitted_evidence -c nq_wiki --folds 3 --config run.datasets.yaml

Why: the pipeline's split keeps 60% of a set's questions to train the routers, so the report's
evidence table rests on the other 40% (23 questions on nq_wiki, 7 on emanual). With 23 questions a
paired difference cannot even be told from 0: rag-hybrid misses 3 of nq_wiki's 23, and winning all
three still leaves the bootstrap interval's lower end at 0. Here every labelled question of every
split is measured: the questions are cut into `--folds` folds by a hash of their id; for each
fold an encoder router is trained as `router_adapter` trains it (same settings, the synthetic
questions' views, the other folds' questions as its train and validation questions, the
section weight, node text, fill order and own-choice rule chosen on those validation questions)
and measured on the fold's questions, which it never saw. The rows of all folds are pooled into
one table with intervals and paired differences against rag-hybrid, the oracle router as the
ceiling. Nothing is written to the catalogue; each fold's router lives in a temporary folder.

Each fold also measures the same router's own choices by the earlier own-choice rule, chosen on
the same choosing questions (`RULE_VARIANTS`: the objective `fewest_words` of
`own_choices.pick_own_choices` on the coarser margin grid), as the row `rdr2-encoder
earlier-rule`; it costs routing only. `--section-labels` trains each fold's router on
whole-section labels instead (every shown node of a gold ANSWER node's section is gold too).
`--real-repeats K` repeats each real question's training views K times beside the synthetic
views, which outnumber them six to one on nq_wiki (by default the run config's
`encoder_real_weight`, as `router_adapter` weights them); `--seed` sets the encoder's training
seed, to tell a setting's effect from the seed's; `--ancestor-levels N` reads each node under N
content ancestors (`encoder_ancestor_levels`). `--borrow OTHER` adds every labelled view of another
collection of the same catalogue to each fold's training views (once each): do real questions of
another corpus teach this one's router what its own few cannot?
`--margin-curve` adds a second table: the same routers' own choices on their measured questions at
every margin of the own-choice grid, in hindsight, i.e. the most the rule's margin could reach on
them if it were chosen on the very questions it is scored on (an upper bound on the rule, for
telling a weak margin choice from weak scores).

The real questions' views are built as `router_metrics` builds the evaluation views (routing
knobs from `--config`'s `routing_subtrees`, else its defaults) and labelled by the oracle
teacher, which is what `run.datasets.yaml` trains with; the synthetic views are the stored ones.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import tempfile
import time
from pathlib import Path

import yaml

from benchmarks.common import catalogue_in, project_resources, session_models
from rag_assets.core.answering.policy.routing_choice import fold_of


def is_validation(qid: str, share: float = 0.25) -> bool:
    """Of a fold's training questions, the stable share held out to choose the router's settings
    (as the routing validation fold is a share of the train questions)."""
    return int(hashlib.sha256(f"validation:{qid}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < share


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-c", "--collection", required=True)
    parser.add_argument("--folds", type=int, default=3, help="folds the questions are cut into (>= 2)")
    parser.add_argument("--config", type=Path, help="run config YAML: routing_subtrees' and router_adapter's keys")
    parser.add_argument(
        "--section-labels", action="store_true",
        help="train on whole-section labels: every shown node of a gold ANSWER node's section is gold too",
    )  # fmt: skip
    parser.add_argument(
        "--real-repeats", type=int,
        help="each real question's training views appear this many times, the synthetic views once "
        "(default: the run config's router_adapter encoder_real_weight, else 1)",
    )  # fmt: skip
    parser.add_argument("--seed", type=int, help="the encoder's training seed (default: the run config's)")
    parser.add_argument(
        "--ancestor-levels", type=int,
        help="content ancestors each node is read under, in training and routing (default: the run config's "
        "router_adapter encoder_ancestor_levels, else 0)",
    )  # fmt: skip
    parser.add_argument(
        "--borrow", action="append", default=[], metavar="COLLECTION",
        help="also train every fold's router on all labelled views of this other collection of the catalogue "
        "(repeatable; once each, not --real-repeats times)",
    )  # fmt: skip
    parser.add_argument(
        "--margin-curve", action="store_true",
        help="also measure every own-choice margin on the measured questions themselves (hindsight: "
        "the most any margin of the rule could reach there, not a figure a router could be chosen for)",
    )  # fmt: skip
    args = parser.parse_args()
    if args.folds < 2:
        raise SystemExit("--folds must be at least 2")
    if args.real_repeats is not None and args.real_repeats < 1:
        raise SystemExit("--real-repeats must be at least 1")
    if args.ancestor_levels is not None and args.ancestor_levels < 0:
        raise SystemExit("--ancestor-levels must be at least 0")
    run(
        args.collection, args.folds, args.config, args.section_labels, args.real_repeats, args.seed,
        args.margin_curve, args.ancestor_levels, tuple(args.borrow),
    )  # fmt: skip


def whole_sections(example):
    """`example` with every shown content node of a gold ANSWER node's section labelled ANSWER
    (the issue's "training on the oracle's whole-section labels")."""
    section = example.state.section
    gold = {section.get(n) for n in example.answer_ids}
    answers = {n for n in example.view.visible_content_ids if section.get(n) in gold} | example.answer_ids
    return dataclasses.replace(example, answer_ids=frozenset(answers))


@dataclasses.dataclass
class CrossFitting:
    """What every fold needs, loaded once from the catalogue: the labelled questions and their
    oracle-labelled views, the stored synthetic views, retrieval, the trees, the encoder settings
    of the run config (with the overrides) and the evidence strategies."""

    collection: str
    folds: int
    settings: object  # EncoderSettings
    real_repeats: int
    embedder: object
    count_tokens: object
    trees: dict
    retrieve: object
    labelled: list
    views: dict  # qid -> its labelled views (LabelledView)
    synthetic: dict  # "train" / "validation" -> synthetic LabelledViews
    baseline: object  # rag-hybrid's StrategySpec
    routed: object  # rdr2 with the encoder router, no budget source
    borrowed: list = dataclasses.field(default_factory=list)  # other collections' labelled views (--borrow)
    models: object = None  # the sessions' models (benchmarks.common.session_models)

    def oracle(self, held):
        """The oracle router of a session whose gold is `held` (the questions it routes, in order)."""
        from rag_assets.core.answering.policy.sessions import open_session
        from rag_assets.core.store.connections import catalogue_connection

        with catalogue_connection(catalogue_in(), read_only=True) as con:
            return open_session(con, self.collection, self.models, gold=held, trees=self.trees).router("oracle")

    def split(self, fold: int) -> tuple[list, list, list]:
        """(measured, choosing, training) questions of `fold`: the fold's own questions, and the
        other folds' questions cut into the share that chooses the router's settings and the rest."""
        held = [q for q in self.labelled if fold_of(q.qid, self.folds, salt="fold") == fold]
        rest = [q for q in self.labelled if fold_of(q.qid, self.folds, salt="fold") != fold]
        return held, [q for q in rest if is_validation(q.qid)], [q for q in rest if not is_validation(q.qid)]

    def examples(self, qid: str) -> list:
        """The question's labelled views as the encoder reads them (RoutingExamples)."""
        return [v.example for v in self.views[qid]]

    def train_views(self, training) -> list:
        """The RoutingExamples a fold's router trains on: the synthetic views and `training`'s,
        weighted as `train_router` weights them, and the borrowed ones once each."""
        from rag_assets.core.routing.held_out_routing import weight_real_views

        own = self.synthetic["train"] + [v for q in training for v in self.views[q.qid]]
        return [v.example for v in weight_real_views(own, self.real_repeats) + self.borrowed]

    def train_router(self, training, choosing, scratch: Path, section_labels: bool = False):
        """An encoder router trained by `router_adapter`'s training (`train_encoder_router`) on
        `training`'s views (each repeated `real_repeats` times), the synthetic views and the
        borrowed ones (once each), its settings chosen on `choosing`
        -> (the loaded router, the training result, the choosing questions' HeldOutEvidence)."""
        from rag_assets.core.evaluation.held_out_evidence import held_out_evidence
        from rag_assets.core.routing.encoder_training import load_encoder_router
        from rag_assets.core.routing.router_training import train_encoder_router

        held_out = held_out_evidence(
            choosing, baseline=self.baseline, routed=self.routed, retrieve=self.retrieve, trees=self.trees
        )
        train = self.synthetic["train"] + [v for q in training for v in self.views[q.qid]]
        once = self.borrowed
        if section_labels:
            train, once = (
                [dataclasses.replace(v, example=whole_sections(v.example)) for v in views] for views in (train, once)
            )
        trained = train_encoder_router(
            self.embedder,
            train,
            self.synthetic["validation"] + [v for q in choosing for v in self.views[q.qid]],
            scratch,
            self.settings,
            real_weight=self.real_repeats,
            once=once,
            held_out=held_out,
            progress=False,
        )
        return load_encoder_router(trained.result.folder, device=self.embedder.device), trained.result, held_out


def prepare(
    collection: str,
    folds: int,
    config: Path | None,
    real_repeats: int | None = None,
    seed: int | None = None,
    ancestor_levels: int | None = None,
    borrow: tuple[str, ...] = (),
) -> CrossFitting:
    """Load the catalogue's questions, trees, index and synthetic views, and build the labelled
    questions' views as `router_metrics` builds the evaluation views (routing knobs from
    `config`'s `routing_subtrees`); the same for each `borrow` collection, whose labelled views
    all join every fold's training views."""
    from rag_assets.core.answering.policy.catalogue import DEFAULT_SETTINGS, strategy_specs
    from rag_assets.core.routing.evaluation_views import ViewKnobs
    from rag_assets.defs.routing.router_config import RouterTrainingConfig
    from rag_assets.defs.routing.routing_data import RoutingDataConfig

    if collection in borrow:
        raise SystemExit(f"--borrow {collection}: that is the measured collection itself")
    ops = (yaml.safe_load(config.read_text()) or {}).get("ops", {}) if config else {}
    data_config = RoutingDataConfig(**(ops.get("routing_subtrees", {}).get("config") or {}))
    training_config = RouterTrainingConfig(**(ops.get("router_adapter", {}).get("config") or {}))
    settings = training_config.encoder_settings()
    real_repeats = real_repeats or training_config.encoder_real_weight
    if seed is not None:
        settings = dataclasses.replace(settings, seed=seed)
    if ancestor_levels is not None:
        settings = dataclasses.replace(settings, ancestor_levels=ancestor_levels)
    knobs = ViewKnobs(
        data_config.top_docs, data_config.passages_per_query, data_config.expansion_views, data_config.token_budget
    )
    resources = project_resources()
    models = session_models(resources)
    embedder = models.embedder()
    count_tokens = resources["base_model"].token_counter()
    own = CollectionViews.load(collection, models, knobs, count_tokens)
    borrowed = [
        v
        for name in borrow
        for views in CollectionViews.load(name, models, knobs, count_tokens).views.values()
        for v in views
    ]
    if borrow:
        print(f"borrowed {len(borrowed)} labelled views of {', '.join(borrow)} into every fold's training", flush=True)
    specs = strategy_specs(DEFAULT_SETTINGS, "short", None)
    return CrossFitting(
        collection, folds, settings, real_repeats, embedder, count_tokens, own.trees, own.retrieve, own.labelled,
        own.views, own.synthetic, specs["rag-hybrid"],
        dataclasses.replace(specs["rdr2"], router="encoder", evidence_budget_from=None), borrowed, models,
    )  # fmt: skip


@dataclasses.dataclass
class CollectionViews:
    """One collection's labelled questions with their oracle-labelled views, its stored synthetic
    views, its trees and its retrieval, from the catalogue."""

    trees: dict
    retrieve: object
    labelled: list
    views: dict  # qid -> its labelled RoutingExamples
    synthetic: dict  # "train" / "validation" -> synthetic RoutingExamples

    @classmethod
    def load(cls, collection: str, models, knobs, count_tokens) -> CollectionViews:
        from rag_assets.core.answering.policy.sessions import open_session
        from rag_assets.core.evaluation.held_out_evidence import remembered
        from rag_assets.core.routing.evaluation_views import evaluation_views
        from rag_assets.core.routing.held_out_routing import LabelledView, load_routing_examples
        from rag_assets.core.routing.samples import SYNTHETIC_QID_PREFIX, RoutingExample, restore
        from rag_assets.core.store.connections import catalogue_connection
        from rag_assets.core.store.question_table import load_question_rows

        with catalogue_connection(catalogue_in(), read_only=True) as con:
            questions = load_question_rows(con, collection)
            session = open_session(con, collection, models)
            synthetic = {
                fold: [v for v in load_routing_examples(con, collection, fold=fold) if v.qid.startswith(SYNTHETIC_QID_PREFIX)]
                for fold in ("train", "validation")
            }  # fmt: skip
        if session.published.index.version is None:
            raise SystemExit(f"{collection}: no published passage index in this catalogue (run `make run` first)")
        trees = session.trees
        retrieve = remembered(session.retrieve)

        started = time.perf_counter()
        built = evaluation_views(  # as router_metrics builds them
            questions, lambda query, k: session.retrieve(query, "hybrid", k), trees, knobs, count_tokens
        )
        views: dict[str, list[LabelledView]] = {}
        for sample, gold in built.views:
            state, view = restore(sample, trees[sample.doc_id])
            example = RoutingExample(sample.query, state, view, gold.answer_ids, gold.expand_ids)
            # the encoder trains on the example alone: no LLM prompt or target is built
            views.setdefault(sample.qid, []).append(LabelledView(sample.qid, sample.query, "", "", example))
        labelled = [q for q in questions if q.qid in views]
        print(f"{collection}: {len(labelled)} labelled questions with views ({len(questions)} in all), "
              f"{sum(map(len, views.values()))} views, {len(synthetic['train'])} + {len(synthetic['validation'])} "
              f"synthetic train + validation views; {time.perf_counter() - started:.0f} s", flush=True)  # fmt: skip
        return cls(trees, retrieve, labelled, views, synthetic)


def run(
    collection: str,
    folds: int,
    config: Path | None,
    section_labels: bool = False,
    real_repeats: int | None = None,
    seed: int | None = None,
    margin_curve: bool = False,
    ancestor_levels: int | None = None,
    borrow: tuple[str, ...] = (),
) -> None:
    from rag_assets.core.evaluation.evidence import (
        evidence_footnote,
        evidence_table,
        measure_evidence,
        summarise_evidence,
    )
    from rag_assets.core.tables import markdown_table

    ctx = prepare(collection, folds, config, real_repeats, seed, ancestor_levels, borrow)
    baseline, routed, retrieve, trees = ctx.baseline, ctx.routed, ctx.retrieve, ctx.trees
    rows, curve = [], []
    with tempfile.TemporaryDirectory(prefix="cross-fitted-") as scratch:
        for fold in range(folds):
            started = time.perf_counter()
            held, choosing, training = ctx.split(fold)
            router, result, held_out = ctx.train_router(training, choosing, Path(scratch), section_labels)
            measured = measure_evidence(
                held,
                baseline=baseline,
                routed=routed,
                kinds=["encoder", "oracle"],
                routers={"encoder": router, "oracle": ctx.oracle(held)},
                retrieve=retrieve,
                trees=trees,
            )
            rows += measured
            rows += rule_variant_rows(router, held_out, held, baseline, routed, retrieve, trees)
            if margin_curve:
                curve += margin_curve_rows(router, held, baseline, routed, retrieve, trees)
            print(f"fold {fold + 1}/{folds}: trained on {len(training)} questions ({result.steps} steps), settings "
                  f"chosen on {len(choosing)} (section weight {router.section_weight}, node text "
                  f"{'heading path' if router.contextual else 'bare'}, fill {router.fill_order}, own choices "
                  f"{router.own_choices}), measured on {len(held)}; {time.perf_counter() - started:.0f} s", flush=True)  # fmt: skip
    summary = summarise_evidence(rows)
    if summary is None:
        raise SystemExit(f"{collection}: no question has a gold label an evidence metric can score")
    header, body = evidence_table(summary)
    print(f"\n{collection}: {summary.questions} questions, each measured by a router trained without it "
          f"({folds} folds)\n\n{markdown_table(header, body)}\n\n{evidence_footnote(summary)}")  # fmt: skip
    if curve:
        header, body = evidence_table(summarise_evidence([r for r in rows if r.strategy == baseline.name] + curve))
        print(f"\n{collection}: the same routers' own choices at every margin, each fold at its chosen section "
              f"weight (hindsight: the margin is not chosen on other questions)\n\n{markdown_table(header, body)}")  # fmt: skip


# The own-choice rule before this one (`own_choices`' docstring says why it changed), measured
# beside it on the same routers.
EARLIER_RULE = ("fewest_words", (0.0, 0.03, 0.05, 0.06, 0.07, 0.08, 0.1))
RULE_VARIANTS = {"earlier-rule": EARLIER_RULE}  # row name: (objective, margins), chosen on the same questions


def own_choice_rows(router, own_choices, name, held, baseline, routed, retrieve, trees) -> list:
    """`router`'s own choices (no fill) on `held` by the rule `own_choices`, as rows named `name`."""
    from rag_assets.core.evaluation.evidence import measure_evidence

    measured = measure_evidence(
        held, baseline=baseline, routed=routed, kinds=["encoder"], fills=(False,),
        routers={"encoder": router.with_own_choices(own_choices)}, retrieve=retrieve, trees=trees,
    )  # fmt: skip
    return [dataclasses.replace(r, strategy=name) for r in measured if r.router]


def rule_variant_rows(router, held_out, held, baseline, routed, retrieve, trees) -> list:
    """The own choices of `router` by each rule of `RULE_VARIANTS`, chosen on `held_out`'s
    questions as the pipeline chooses its own: as the rows `rdr2-encoder <variant>` (no fill)."""
    from rag_assets.core.routing.own_choices import choose_own_choices

    rows = []
    for name, (objective, margins) in RULE_VARIANTS.items():
        calibration = choose_own_choices(router.with_own_choices(None), held_out, margins=margins, objective=objective)
        if calibration is None or calibration.chosen is None:
            continue
        print(f"  {name}: {calibration.chosen}", flush=True)
        rows += own_choice_rows(
            router, calibration.chosen, f"rdr2-encoder {name}", held, baseline, routed, retrieve, trees
        )
    return rows


def margin_curve_rows(router, held, baseline, routed, retrieve, trees) -> list:
    """`router`'s own choices on `held` at every margin of `own_choices.MARGINS`, its chosen
    section weight (the router's own without a chosen rule), as rows `own margin <m>` (no fill)."""
    from rag_assets.core.routing.own_choices import MARGINS, OwnChoices

    weight = router.own_choices.section_weight if router.own_choices else router.section_weight
    return [
        row
        for margin in MARGINS
        for row in own_choice_rows(
            router, OwnChoices(margin, weight), f"own margin {margin:.2f}", held, baseline, routed, retrieve, trees
        )
    ]


if __name__ == "__main__":
    main()
