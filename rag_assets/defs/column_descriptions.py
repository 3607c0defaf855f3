"""What each column of each catalogue table holds, in words, for the table schemas the Dagster UI
shows on every catalogue asset (`rag_assets.defs.metadata.table_metadata`). The column names and types
come from the store's schema; a test keeps this file and the schema in step."""

import re

COLLECTION = "The collection (partition) the row belongs to."
_QUESTION = {
    "collection": COLLECTION,
    "qid": "Stable question id (the train/dev/test split is derived from it when the file gives none).",
    "query": "The question as asked.",
    "answers": "Gold short answers (empty when the question has none).",
    "evidences": "Gold evidence lines: the text spans that answer the question.",
    "section_path": "Gold section: the heading path of the section that answers the question.",
    "gold_doc": "The document (title or file) that answers the question; empty when unknown.",
    "not_answerable": "True when the question set says the documents cannot answer it.",
    "split": "train, dev or test.",
    "gold_pages": "1-based pages of the gold document that hold the evidence (FinanceBench); empty when unknown.",
    "question_type": "The set's own kind of question (FinanceBench: metrics-generated, domain-relevant, "
    "novel-generated); empty when the set has none.",
}

COLUMN_DESCRIPTIONS: dict[str, dict[str, str]] = {
    "source_documents": {
        "collection": COLLECTION,
        "doc_id": "Stable document id (from the path, or the record's own id in JSONL).",
        "uri": "Where the document was read from (file path, with #record for JSONL pages).",
        "format": "The format the document was parsed as (markdown, html, text, jsonl, manual_json, ...).",
        "title": "The document's title (its first heading, or the file name).",
        "content_hash": "sha256 of the raw text: a change re-parses and re-embeds the document.",
        "size_bytes": "Size of the raw document in bytes.",
        "text": "The raw document text as read.",
        "reader_version": "The reading code and caps the text and title came from: same bytes, same version, not read again.",
    },
    "rejected_documents": {
        "collection": COLLECTION,
        "uri": "The file or record that was skipped.",
        "stage": "Where it failed: ingest (reading) or parse (building its tree).",
        "reason": "Why, in one line (empty file, invalid UTF-8, too large, unparseable, ...).",
    },
    "document_nodes": {
        "collection": COLLECTION,
        "doc_id": "The document the node belongs to.",
        "node_id": "Node id in document order; 0 is the root (the title).",
        "parent_id": "The parent node's id (null for the root).",
        "kind": "structure (a heading) or content (a paragraph, list item, table row or code block).",
        "block": "The source block type: heading, paragraph, list_item, table_row, code, ...",
        "depth": "Depth in the tree (the root is 0).",
        "text": "The node's text, exactly the span of the normalised document text.",
        "heading_path": "The headings from the root down to the node.",
        "span_start": "Start offset of the node's text in document_texts.text.",
        "span_end": "End offset (exclusive) of the node's text in document_texts.text.",
        "page_start": "First page (1-based) of a PDF or Word document the node lies on; 0 for unpaginated formats.",
        "page_end": "Last page the node lies on; 0 for unpaginated formats.",
    },
    "document_texts": {
        "collection": COLLECTION,
        "doc_id": "The document.",
        "content_hash": "sha256 of the raw text the tree was built from (rag trace compares it).",
        "text": "The normalised text that node and citation spans index into.",
        "reader_version": "The reading code the tree was built by: same content, same version, the tree is kept.",
    },
    "document_cards": {
        "collection": COLLECTION,
        "doc_id": "The document.",
        "title": "What the document is called: its own title, else (a filing) registrant, form and period.",
        "organisation": "The company or body it is by (an SEC cover's registrant, a release's reporter); '' unknown.",
        "kind": "An SEC form (10-K, 10-Q, 8-K, ...), `earnings release`, `manual`, `annual report`; '' unknown.",
        "fiscal_year": "The fiscal year the document says it is about; NULL where it says none.",
        "quarter": "The fiscal quarter (1-4) it says it is about; NULL where it says none.",
        "date": "ISO date it states: its period's end, or an 8-K's event; '' where none.",
        "product": "The product a manual is for; ''.",
        "model": "The model number it names; ''.",
        "version": "The version or revision it names; ''.",
        "from_sidecar": "The fields the collection owner's cards.yaml set (the rest were read from the document).",
    },
    "passages": {
        "collection": COLLECTION,
        "passage_id": "Stable passage id: <doc_id>#<first node id>, with .<piece> when a long node was split.",
        "doc_id": "The document the passage was cut from.",
        "node_ids": "The tree nodes the passage covers, in order.",
        "span_starts": "Start offset of each covered node's text (or sentence slice) in the document text.",
        "span_ends": "End offset of each covered node's text (or sentence slice).",
        "heading_path": "The section the passage lies in (the sections it joins share, when small sections are merged).",
        "text": "The passage text: its nodes' texts joined.",
        "word_count": "Words in the passage.",
        "content_hash": "sha256 of the text: an unchanged passage is not re-embedded.",
    },
    "questions": _QUESTION,
    "synthetic_questions": {
        **_QUESTION,
        "qid": "synthetic:<kind>:<id>: a question made from the collection's own trees.",
        "split": "Always train: synthetic questions only train, never evaluate.",
    },
    "routing_subtrees": {
        "collection": COLLECTION,
        "subtree_id": "Stable id of the view (question, document, view kind).",
        "qid": "The training question the view was retrieved for.",
        "query": "The question text.",
        "doc_id": "The retrieved document.",
        "view": "initial (the Retrieval SubTree) or an expansion view.",
        "rendered": "The view as the router reads it (`id: text` lines within the token budget).",
        "visible_ids": "Content nodes shown: the ids an ANSWER may name.",
        "collapsed_ids": "Headings whose content is hidden: the ids an EXPAND may name.",
        "seen_ids": "Every node shown so far for this question and document.",
    },
    "routing_actions": {
        "collection": COLLECTION,
        "subtree_id": "The view that was labelled.",
        "qid": "The training question.",
        "fold": "train or validation (by question, so no question is in both).",
        "teacher": "Who labelled it: oracle, llm or similarity.",
        "target": "The label in the router grammar ([ANSWER] / [EXPAND] lines or Cannot answer); "
        "empty when the teacher failed.",
        "answer_ids": "Nodes the teacher answers with.",
        "expand_ids": "Headings the teacher expands.",
        "kind": "answer, expand, refuse or failed (failed labels are kept for audit, never trained on).",
        "raw": "The teacher's raw output.",
    },
    "router_metrics": {
        "collection": COLLECTION,
        "model": "encoder, similarity (untrained encoder), adapter, adapter-rank or base (untrained LLM).",
        "samples": "Views scored (the LLM kinds: the first max_samples of them).",
        "ans_f1": "Mean per-view F1 of the ANSWERed nodes, over views where the gold or the router answers.",
        "exp_pre": "Precision of the EXPAND lines.",
        "ref_acc": "Share of the gold refusals the router refused (garbage is not a refusal).",
        "expelled_per_output": "Invalid action lines per output (ignored by the parser).",
        "collapsed_rate": "Share of outputs with no usable line and no refusal.",
        "parse_failure_rate": "Share of outputs with an expelled line or collapsed.",
        "questions": "Questions the scored views come from (0: written before it was recorded).",
        "dev_test": "True: the views of every dev + test question, oracle-labelled; false: the routing "
        "validation fold, teacher-labelled (no dev/test questions, or an older catalogue).",
        "ans_f1_low": "ANS-F1's 95% bootstrap interval, lower end (questions resampled).",
        "ans_f1_high": "ANS-F1's 95% bootstrap interval, upper end (questions resampled).",
        "exp_pre_low": "EXP-PRE's 95% bootstrap interval, lower end (questions resampled).",
        "exp_pre_high": "EXP-PRE's 95% bootstrap interval, upper end (questions resampled).",
        "ref_acc_low": "REF-ACC's 95% bootstrap interval, lower end (questions resampled).",
        "ref_acc_high": "REF-ACC's 95% bootstrap interval, upper end (questions resampled).",
        "answer_views": "Views ANS-F1 averages over (a gold or a predicted ANSWER; 0: ANS-F1 undefined; "
        "empty: written before it was recorded).",
        "gold_answer_views": "Views with a gold ANSWER (empty: written before it was recorded).",
        "refusal_views": "Gold refusals REF-ACC rests on (0: REF-ACC undefined; empty: written before it was "
        "recorded).",
        "expand_lines": "EXPAND lines the router wrote, EXP-PRE's denominator (0: EXP-PRE undefined; empty: "
        "written before it was recorded).",
    },
    "answers": {
        "collection": COLLECTION,
        "answer_id": "Stable answer id (rag trace takes it).",
        "source": "Who asked: evaluation (the answers asset), cli (rag ask) or service.",
        "run_id": "The Dagster run (or CLI call) that produced it.",
        "created_at": "When it was stored.",
        "qid": "The question's id (empty for ad-hoc questions).",
        "question": "The question.",
        "strategy": "The row name (rag-hybrid, rdr2, dota, ...).",
        "strategy_kind": "The strategy family: none, rag, rdr2, contregen or disco.",
        "grid": "The test-time scaling grid this answer belongs to (empty outside a grid).",
        "grid_value": "The grid point (expand rounds or top-k).",
        "knobs": "JSON: every setting the strategy ran with.",
        "answer": "The reader's answer.",
        "evidence": "Exactly what the reader was given.",
        "evidence_words": "Words of evidence.",
        "cited_doc_ids": "The document of each citation.",
        "cited_node_ids": "The tree node of each citation.",
        "cited_heading_paths": "The heading path of each citation, joined.",
        "cited_texts": "The cited text, as it was at answer time.",
        "cited_span_starts": "Start offset of each citation in its document's text.",
        "cited_span_ends": "End offset of each citation.",
        "passage_ids": "The retrieved passages.",
        "retrieved_doc_ids": "The retrieved documents.",
        "router_prompt_tokens": "Tokens the router (or generation stages) read.",
        "router_output_tokens": "Tokens the router (or generation stages) wrote.",
        "reader_prompt_tokens": "Tokens the reader read.",
        "reader_output_tokens": "Tokens the reader wrote.",
        "engine_calls": "LLM engine calls this answer took part in.",
        "seconds": "Wall-clock seconds spent on this answer.",
        "expelled": "Invalid router lines ignored.",
        "refused_docs": "Documents the router refused.",
        "versions": "JSON: the versions behind the answer (content hashes, LanceDB version, router id, models).",
        "structure": "JSON: ConTReGen's synthesis tree or Disco-RAG's discourse structure (empty otherwise).",
        "answer_form": "generated (the reader wrote it) or extractive (the best sentence of the evidence; also "
        "where generated was asked and the reader wrote nothing: versions.reader_empty; a yes/no question's quote "
        "starts with the reader's scored verdict: versions.verdict); empty: stored before styles.",
        "echo": "Echoed prompt text cut from the reader's output: '' none, stripped (the answer before it "
        "kept) or refused (nothing left: the evidence's best sentence instead where evidence was given, as "
        "answer_form says); looped (a phrase repeated: cut after its first saying) or garbled (only list numbering "
        "or a looping lead-in: no answer, answered as refused).",
        "supporting": "How many of the first citations the answer rests on; the rest is evidence also given "
        "(-1: stored before attribution).",
        "attribution": "How the supporting citations were found: markers (the reader's [n]), overlap, "
        "cross-encoder or extractive (the cited sentence is the answer).",
    },
    "index_publications": {
        "collection": COLLECTION,
        "table_name": "The LanceDB table.",
        "version": "The LanceDB version that holds this collection's passages.",
        "tag": "The version's tag (<collection>-<run id>).",
        "passages": "Passages published.",
        "digest": "Digest of the published passages (compared with the catalogue's).",
        "published_at": "When.",
    },
    "routing_view_settings": {
        "collection": COLLECTION,
        "split": "The question splits the views were built for.",
        "top_docs": "Documents viewed per question.",
        "passages_per_query": "Passages retrieved per question to choose them.",
        "expansion_views": "Expansion views per question.",
        "token_budget": "Router input per view (tokens).",
    },
    "published_models": {
        "collection": "The collection the piece serves ('' for pieces over every collection: the namespace router).",
        "kind": "encoder, llm, similarity, reranker, namespaces, reorder_policy or answer_form (the "
        "collection's default answer form, generated or extractive, in model_id; how it was chosen in details).",
        "model_id": "The published piece's content id (empty when its step trained none).",
        "path": "Its folder (empty when its step trained none).",
        "details": "JSON: what answering reads besides the folder (the similarity thresholds), or why none was trained.",
        "run_id": "The Dagster run that published it.",
        "published_at": "When.",
    },
    "api_tokens": {
        "name": "The token's name (who holds it).",
        "token_hash": "SHA-256 of the token (the token itself is shown once and never stored).",
        "collection": "A collection the token may use ('*': every collection).",
        "scope": "read (search, documents, answers), ask (also ask) or admin (also tokens).",
        "created_at": "When it was created.",
        "revoked_at": "When it was revoked (empty while valid).",
    },
    "answer_askers": {
        "answer_id": "The answer the service stored.",
        "token_name": "The name of the token that asked it.",
    },
    "catalogue_meta": {
        "schema_version": "The catalogue layout it was written with (store/upgrades.py upgrades an older one).",
        "upgraded_at": "When it was created or last upgraded (UTC).",
    },
}


# A run of placeholders like `<doc_id>#<first node id>` or `.<piece>`: the UI renders descriptions
# as Markdown, where a bare `<doc_id>` is an HTML tag and vanishes; as code it shows as written.
_PLACEHOLDERS = re.compile(r"(?:[\w.#:-]*<[^<>`]+>)+[\w.#-]*")


def markdown_safe(text: str) -> str:
    """`text` with its `<placeholder>` runs as Markdown code, so the Dagster UI shows them."""
    return _PLACEHOLDERS.sub(lambda m: f"`{m.group(0)}`", text)


def column_description(table: str, column: str) -> str | None:
    """The description of a catalogue column (as the UI renders it: placeholders as code), or None."""
    text = COLUMN_DESCRIPTIONS.get(table, {}).get(column)
    return markdown_safe(text) if text is not None else None
