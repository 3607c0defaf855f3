"""A run config checked whole before a run starts, with the bounds the steps enforce.

Dagster's own check (`validate_run_config`) knows keys and types, not the bounds of a pydantic
field (`ge=1`, `gt=0`) or a validator's choices: those fail only when their step or resource
starts, minutes into a run. Here every op's config and every resource's config of the run config
is built through its own class (the one place its bounds are written), so a value the step would
refuse is refused now, one line per mistake naming the key, the value and the bound.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

import dagster as dg
import pydantic


def config_class(node: Any) -> type[dg.Config] | None:
    """The `Config` class an asset's op takes as its `config` argument, if any."""
    function = getattr(getattr(node, "compute_fn", None), "decorated_fn", None)
    if function is None:
        return None
    parameter = inspect.signature(function).parameters.get("config")
    annotation = parameter.annotation if parameter is not None else None
    return annotation if isinstance(annotation, type) and issubclass(annotation, dg.Config) else None


def bound_mistakes(job: dg.JobDefinition, resources: Mapping[str, Any], run_config: Mapping[str, Any]) -> list[str]:
    """One line per value of `run_config` that its op's or resource's config class refuses."""
    classes = {node.name: config_class(node) for node in job.graph.node_defs}
    mistakes: list[str] = []
    for name, entry in _entries(run_config, "ops"):
        cls = classes.get(name)
        if cls is not None:
            mistakes += _refusals(f"ops.{name}.config", lambda cls=cls, entry=entry: cls(**entry))
    for key, entry in _entries(run_config, "resources"):
        resource = resources.get(key)
        if isinstance(resource, dg.ConfigurableResource):
            mistakes += _refusals(f"resources.{key}.config", lambda r=resource, entry=entry: _rebuilt(r, entry))
    return mistakes


def _entries(run_config: Mapping[str, Any], section: str) -> list[tuple[str, dict[str, Any]]]:
    """(name, its `config` mapping) of every entry of a run config section that sets one."""
    entries = run_config.get(section) or {}
    found = []
    for name, entry in entries.items() if isinstance(entries, Mapping) else ():
        config = entry.get("config") if isinstance(entry, Mapping) else None
        if isinstance(config, Mapping):
            found.append((str(name), dict(config)))
    return found


def _rebuilt(resource: dg.ConfigurableResource, overrides: dict[str, Any]) -> dg.ConfigurableResource:
    """The resource as the run would build it: its configured values, the run config's on top."""
    values = {field: getattr(resource, field) for field in type(resource).model_fields}
    return type(resource)(**{**values, **overrides})


def _refusals(prefix: str, build: Callable[[], Any]) -> list[str]:
    try:
        build()
    except pydantic.ValidationError as err:
        return [_line(prefix, error) for error in err.errors()]
    except (ValueError, TypeError) as err:
        return [f"{prefix}: {' '.join(str(err).split())}"]
    return []


def _line(prefix: str, error: Mapping[str, Any]) -> str:
    """`ops.x.config.key = value: the bound it breaks` (pydantic's message names the bound)."""
    key = ".".join(str(part) for part in (prefix, *error.get("loc", ())))
    message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
    return f"{key} = {error.get('input')!r}: {message}"
