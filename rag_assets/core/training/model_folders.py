"""Publishing a trained model folder atomically, named by the digest of its files.

Kept free of torch so that the stages which only publish or look up folders import no ML stack.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path


def directory_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for file in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(file.relative_to(folder).as_posix().encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


def publish_model_folder(
    output_root: Path,
    write: Callable[[Path], dict],
    *,
    record: str,
    prefix: str = "",
    identity: Mapping[str, object] | None = None,
) -> tuple[Path, str]:
    """Write a trained model into a staging folder (`write` returns its training record), name it
    by the digest of its files and of `identity` (`prefix` + 16 hex: same data and settings, same
    id) and publish it atomically as `output_root/<id>`; an identical folder already published is
    kept. `identity`: the record's fields that change what the model does besides its weights
    (calibrated thresholds, a fusion or section weight): the same weights calibrated differently
    are another model, and must not be answered with the folder of the first calibration."""
    output_root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".adapter-", dir=output_root))
    try:
        details = write(staging)
        model_id = prefix + directory_digest(staging)
        if identity:
            model_id = (
                prefix
                + hashlib.sha256((model_id + json.dumps(identity, sort_keys=True, default=str)).encode()).hexdigest()[
                    :16
                ]
            )
        (staging / record).write_text(json.dumps({"adapter_id": model_id, **details}, indent=1))
        final = output_root / model_id
        if final.exists():
            shutil.rmtree(staging)
        else:
            os.replace(staging, final)  # atomic on one filesystem: readers never see half a model
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return final, model_id
