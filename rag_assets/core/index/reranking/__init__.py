"""The passage reranker: the packaged MiniLM fine-tuned on the collection's questions, used through LanceDB.

No reranker weights ship in any package we install, so one is trained here, on (query, passage)
groups from the collection's own questions (train split) and synthetic questions about the
documents those questions ask about: one gold passage against hard negatives, the first-stage
hybrid candidates that are not gold. What it learns is partly a prior over documents: on the
e-manuals (near-identical manuals) the first stage finds the right section in the wrong manual,
and the labelled questions teach which manual users ask about. Two models
(`RerankerSettings.model`):

- `bi-encoder` (the default): the packaged sentence encoder fine-tuned contrastively on the groups
  (`core/training/contrastive.py`, the recipe the encoder router uses); a candidate's score is the cosine of
  the fine-tuned query and passage embeddings. It starts from a model that already ranks as well
  as the dense first stage, so a few dozen CPU steps move it from there.
- `cross-encoder`: a one-logit classification head on the packaged MiniLM (sentence-transformers'
  `CrossEncoder`) with a listwise softmax cross-entropy over each group. It starts from an
  untrained head: on the real sets it ranked the gold first on 15-50% of held-out questions where
  the first stage did on 65%, hence not the default.

A passage is gold for a question when it comes from the gold document (title, file name or doc
key) and, where the question has finer labels, lies under the gold section path, holds a gold
evidence line, or contains a gold short answer. Inverse-cloze synthetic questions have their
sentence taken out of the positive (as the encoder router does), so the model learns what a
passage is about rather than string matching.

At query time the reranker is a LanceDB `Reranker`, so hybrid + rerank is ONE LanceDB query:
the vector and full-text candidates are fused by reciprocal rank (as LanceDB's RRFReranker
does), the model scores the `depth` best of them, and its rank joins the fusion with a weight
calibrated on held-out questions (recall@5 of a gold passage);
`weight < 0` means the model's order alone. The calibration keeps a freshly trained model from
undoing a good first stage on a collection where it learnt little: the weight that was best on
held-out questions is the one used, and 0 (the first stage alone) is always a candidate.

The package, one concern a module: `labels.py` (which passages are gold, training groups, the
held-out split), `scorers.py` (the two models' scoring), `lancedb_reranker.py` (the LanceDB
reranker and the rank fusion), `training.py` (fine-tuning, fusion calibration, publishing),
`recipe.py` (the whole recipe for one collection) and `folders.py` (published reranker folders).
"""
