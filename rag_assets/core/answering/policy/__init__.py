"""The ask policy: what an ask is, decided in one place.

- `catalogue`: every strategy by name, built from one `StrategySettings` (the `answers` asset's
  config, the service and the benchmarks all build their specs here);
- `fallback`: the one rule for an asked strategy whose trained piece is missing;
- `budgets`: the evidence budget (rdr2 reads at most the words rag-hybrid read);
- `sessions`: the answering session of a collection, opened from the catalogue;
- `asks`: the spec an ask runs (options, the collection's default answer form, the fallback);
- `default_form`: how the default form is chosen (a quote unless the reader is right more often);
- `measure`: the default form and the relevance floor measured on validation questions (what
  the `answer_policy` asset publishes).
"""
