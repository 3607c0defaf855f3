"""LLM engines behind one interface (batched chat generation + optional LoRA adapter)."""
