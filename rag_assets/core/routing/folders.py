"""What a published router folder is: the marker file that makes it complete, per router kind.

No catalogue import here: training code (which may run on a GPU machine without the catalogue's
database) and the registry both read it."""

from __future__ import annotations

import json
from pathlib import Path

# The file that makes a folder a complete router of each kind: written last by the atomic publish
# (core/router_training.publish_model_folder), so its presence means the folder is whole.
ROUTER_MARKERS = {"encoder": "router.json", "llm": "adapter_config.json"}


def router_folder_kind(folder: Path) -> str | None:
    """'encoder' or 'llm' for a complete published router folder, None for anything else."""
    folder = Path(folder)
    record = folder / ROUTER_MARKERS["encoder"]
    if record.is_file():
        try:
            return "encoder" if json.loads(record.read_text()).get("kind") == "encoder" else None
        except (json.JSONDecodeError, OSError, AttributeError):
            return None
    return "llm" if (folder / ROUTER_MARKERS["llm"]).is_file() else None
