"""The spec an ask runs: the named strategy as evaluated, the asker's overrides, the collection's
default answer form where none was asked, and the one fallback rule, each choice noted.

The service, `rag ask` and the `answer_policy` asset (which measures the default form and floor on
exactly this spec) all plan their asks here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from rag_assets.core.answering.policy.catalogue import answer_style, canonical_strategy, named_spec
from rag_assets.core.answering.policy.fallback import runnable_spec
from rag_assets.core.answering.policy.options import MODES, ROUTERS, AskOptions, Note
from rag_assets.core.answering.published import PublishedCollection
from rag_assets.core.answering.types import ANSWER_FORMS, EXTRACTIVE_KINDS, StrategySpec
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.errors import ConfigError


def plan_ask(
    strategy: str,
    published: PublishedCollection,
    questions: Sequence[Question],
    options: AskOptions = AskOptions(),
    note: Note = lambda _text: None,
) -> StrategySpec:
    """The spec one ask of `strategy` runs on `published`'s collection (`questions`: the
    collection's question set, whose gold answers say which reader style fits)."""
    name = canonical_strategy(strategy)
    style = options.style or answer_style("auto", questions)
    routing = published.routing_choice
    spec = named_spec(name, style, published.llm_adapter, routing=routing)
    if spec.kind == "rdr2" and routing is not None:
        note(f"routing with {routing.setting.label} ({routing.reason})")
    if options.form is None and spec.kind in EXTRACTIVE_KINDS:  # the collection's default form
        choice = published.form_choice
        note(
            f"answer form {published.default_form}, the collection's default: "
            + (choice.reason if choice else "not measured yet (`answer_policy` has not run)")
        )
        options = dataclasses.replace(options, form=published.default_form)
    spec = with_options(spec, published.llm_adapter, options)
    runnable = runnable_spec(spec, published)
    if runnable.note:
        note(runnable.note)
    return runnable.spec


def with_options(spec: StrategySpec, llm_adapter: str | None, options: AskOptions) -> StrategySpec:
    """`spec` with the asker's overrides (the label names a changed router, mode or form)."""
    if options.retrieval_mode is not None and options.retrieval_mode not in MODES:
        raise ConfigError(f"--mode must be dense, bm25 or hybrid, not {options.retrieval_mode!r}")
    changes: dict[str, object] = {
        key: value
        for key, value in (
            ("top_k", options.top_k),
            ("expand_iterations", options.expand_iterations),
            ("retrieval_mode", options.retrieval_mode),
            ("tree_depth", options.tree_depth),
            ("tree_branching", options.tree_branching),
        )
        if value is not None
    }
    if options.router is not None and spec.kind == "rdr2" and options.router != spec.router:
        if options.router not in ROUTERS:
            raise ConfigError(f"--router must be encoder, llm, similarity or hit-nodes, not {options.router!r}")
        changes.update(
            router=options.router,
            name=f"rdr2-{options.router}",
            adapter=llm_adapter if options.router == "llm" else None,
        )
    if spec.kind == "rag" and options.retrieval_mode is not None:
        changes["name"] = f"rag-{options.retrieval_mode}"
    if options.form is not None and options.form != spec.answer_form:
        changes.update(
            answer_form=_checked_form(options.form, spec), name=f"{changes.get('name', spec.name)}-{options.form}"
        )
    return dataclasses.replace(spec, **changes) if changes else spec


def _checked_form(form: str, spec: StrategySpec) -> str:
    if form not in ANSWER_FORMS:
        raise ConfigError(f"--form must be one of {', '.join(ANSWER_FORMS)}, not {form!r}")
    if form == "extractive" and spec.kind not in EXTRACTIVE_KINDS:
        raise ConfigError(f"--form extractive needs evidence: strategy {spec.name} gathers none of its own")
    return form
