"""Model training shared by the stages: the optimisation loop, contrastive fine-tuning, LoRA, model folders."""
