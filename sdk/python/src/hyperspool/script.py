"""The durable calls a workflow script makes: ``from hyperspool import script``.

Each function is one call to the run's agent over ``$SPOOL_SOCKET`` (docs/sdks.md). The script
re-runs from the top on every pass; recorded calls hand back what they recorded, so keep the code
between them cheap and free of side effects and put the real work in ``step_fn`` and ``step``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import AgentUnavailable, HyperspoolError, ScriptError, StepFailed
from .records import annotate, call_graph, call_node, emit, output_set, spawn
from .state import state_add, state_delete, state_get, state_list, state_set
from .steps import JsonValue, Lock, StepResult, lock, step, step_fn
from .waits import Duration, sleep, wait_event, wait_signal

if TYPE_CHECKING:
    from .activities import activity, activity_collect, activity_submit, activity_wait_all
    from .artifacts import artifact_get, artifact_list, artifact_put, checkout

# Loaded on first use (PEP 562): artifacts pull tarfile and hashlib, and a script of steps and
# waits should not pay for them at every pass's start (issue 32). tests/test_import_cost.py keeps it so.
_LAZY = {
    "activity": "activities",
    "activity_submit": "activities",
    "activity_collect": "activities",
    "activity_wait_all": "activities",
    "artifact_put": "artifacts",
    "artifact_get": "artifacts",
    "artifact_list": "artifacts",
    "checkout": "artifacts",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __package__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

__all__ = [
    "step",
    "step_fn",
    "sleep",
    "wait_signal",
    "wait_event",
    "lock",
    "activity",
    "activity_submit",
    "activity_collect",
    "activity_wait_all",
    "emit",
    "spawn",
    "call_node",
    "call_graph",
    "state_get",
    "state_set",
    "state_add",
    "state_delete",
    "state_list",
    "output_set",
    "annotate",
    "artifact_put",
    "artifact_get",
    "artifact_list",
    "checkout",
    "StepResult",
    "Lock",
    "JsonValue",
    "Duration",
    "StepFailed",
    "ScriptError",
    "AgentUnavailable",
    "HyperspoolError",
]
