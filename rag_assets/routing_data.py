"""`routing_subtrees` and `routing_actions`: the router's training data, curated by a teacher."""

from collections import Counter

import dagster as dg
import pyarrow as pa
from dagster_duckdb import DuckDBResource

from rag_assets.core.catalogue import load_question_rows, load_trees, replace_collection
from rag_assets.core.questions import stable_split
from rag_assets.core.retrieval import search
from rag_assets.core.routing_data import RoutingSample, build_routing_samples, oracle_label, restore
from rag_assets.metadata import counter_table, fenced
from rag_assets.partitions import collection_partitions
from rag_assets.resources.embedder import EmbedderResource
from rag_assets.resources.vectors import VectorStoreResource


class RoutingDataConfig(dg.Config):
    split: str = "train"  # which questions the router learns from
    top_docs: int = 3
    passages_per_query: int = 10
    expansion_views: int = 1  # expansion views added per retrieved document
    token_budget: int = 1024


@dg.asset(
    partitions_def=collection_partitions,
    deps=["passage_index", "questions"],
    group_name="routing_data",
    kinds={"python", "duckdb"},
    description="Retrieval SubTrees of the training questions' top documents, as the router sees "
    "them, plus expansion views; identical (question, rendering) pairs kept once.",
)
def routing_subtrees(context: dg.AssetExecutionContext, config: RoutingDataConfig, catalogue: DuckDBResource,
                     embedder: EmbedderResource, vectors: VectorStoreResource) -> dg.MaterializeResult:
    collection = context.partition_key
    model = embedder.get()
    index = vectors.index(model)
    with catalogue.get_connection() as con:
        questions = load_question_rows(con, collection, config.split)
        trees = {doc_id: nodes for doc_id, (nodes, _) in load_trees(con, collection).items()}
        samples = build_routing_samples(
            questions,
            lambda q: search(index, model, q, k=config.passages_per_query, collections=[collection]),
            trees, top_docs=config.top_docs, expansion_views=config.expansion_views, token_budget=config.token_budget,
        )
        table = pa.table({
            "collection": [collection] * len(samples),
            **{f: [getattr(s, f) for s in samples] for f in RoutingSample.__dataclass_fields__},
        })
        replace_collection(con, collection, {"routing_subtrees": table})
    return dg.MaterializeResult(metadata={
        "dagster/row_count": len(samples),
        "questions": len(questions),
        "views": dg.MetadataValue.md(counter_table("view", Counter(s.view.split(":")[0] for s in samples))),
        "sample": dg.MetadataValue.md(f"**{samples[0].query}**\n\n" + fenced(samples[0].rendered) if samples else "none"),
    })


class TeacherConfig(dg.Config):
    teacher: str = "oracle"  # the answer-aware oracle; the llm and similarity teachers are to come
    validation_fraction: float = 0.2


@dg.asset(
    partitions_def=collection_partitions,
    deps=["routing_subtrees"],
    group_name="routing_data",
    kinds={"python", "duckdb"},
    description="Teacher labels for every routing subtree, in the router's output grammar; "
    "train/validation split by question.",
)
def routing_actions(context: dg.AssetExecutionContext, config: TeacherConfig, catalogue: DuckDBResource) -> dg.MaterializeResult:
    if config.teacher != "oracle":
        raise dg.Failure(f"teacher {config.teacher!r} is not available yet; use 'oracle'")
    collection = context.partition_key
    with catalogue.get_connection() as con:
        samples = [RoutingSample(*row) for row in con.execute(
            f"SELECT {', '.join(RoutingSample.__dataclass_fields__)} FROM routing_subtrees WHERE collection = ? "
            "ORDER BY subtree_id", [collection]).fetchall()]
        questions = {q.qid: q for q in load_question_rows(con, collection)}
        trees = {doc_id: nodes for doc_id, (nodes, _) in load_trees(con, collection).items()}
        rows = []
        for sample in samples:
            doc, view = restore(sample, trees[sample.doc_id])
            label = oracle_label(doc, view, questions[sample.qid])
            kind = "answer" if label.answer_ids else "expand" if label.expand_ids else "refuse"
            # Salted: the question split already used the bare qid's hash, so it would correlate.
            in_train = stable_split(f"routing-fold/{sample.qid}", (1 - config.validation_fraction, 0.0)) == "train"
            fold = "train" if in_train else "validation"
            rows.append((collection, sample.subtree_id, sample.qid, fold, config.teacher, label.target,
                         list(label.answer_ids), list(label.expand_ids), kind, label.raw))
        names = ["collection", "subtree_id", "qid", "fold", "teacher", "target", "answer_ids", "expand_ids", "kind", "raw"]
        replace_collection(con, collection, {"routing_actions": pa.table(
            {name: [r[i] for r in rows] for i, name in enumerate(names)},
            schema=pa.schema([(n, pa.list_(pa.int32()) if n.endswith("_ids") else pa.string()) for n in names]))})
    kinds = Counter(r[8] for r in rows)
    return dg.MaterializeResult(metadata={
        "dagster/row_count": len(rows),
        "ANS": kinds["answer"], "EXP": kinds["expand"], "REF": kinds["refuse"],
        "folds": dg.MetadataValue.md(counter_table("fold", Counter(r[3] for r in rows))),
        "teacher": config.teacher,
    })
