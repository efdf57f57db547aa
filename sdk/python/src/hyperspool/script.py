"""The durable calls a workflow script makes: ``from hyperspool import script``.

Each function is one call to the run's agent over ``$SPOOL_SOCKET`` (docs/sdks.md). The script
re-runs from the top on every pass; recorded calls hand back what they recorded, so keep the code
between them cheap and free of side effects and put the real work in ``step_fn`` and ``step``.
"""

from __future__ import annotations

from .activities import activity, activity_collect, activity_submit, activity_wait_all
from .artifacts import artifact_get, artifact_list, artifact_put, checkout
from .errors import AgentUnavailable, HyperspoolError, ScriptError, StepFailed
from .records import annotate, call_graph, call_node, emit, output_set, spawn
from .state import state_add, state_delete, state_get, state_list, state_set
from .steps import JsonValue, Lock, StepResult, lock, step, step_fn
from .waits import Duration, sleep, wait_event, wait_signal

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
