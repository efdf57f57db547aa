"""Recorded calls that reach past the run: events, child runs, outputs and annotations."""

from __future__ import annotations

import os
from typing import Any

from .answers import call, encode_value
from .answers import text as answer_text
from .connection import Message
from .errors import ScriptError

__all__ = ["emit", "spawn", "output_set", "annotate"]

# As the agent picks an interpreter from a file's extension (src/agent/interpreters.ts).
_INTERPRETERS = {
    ".sh": "bash -eu",
    ".bash": "bash -eu",
    ".py": "python3",
    ".mjs": "node",
    ".js": "node",
    ".cjs": "node",
}


def emit(type: str, payload: Any = None, subject: str | None = None) -> str:
    """Emits an event of ``type`` (recorded: emitted once across replays) and returns its id.
    ``payload`` is any JSON value; ``subject`` keys it for handlers and waits."""
    request: Message = {"verb": "event.emit", "type": type}
    if subject is not None:
        request["subject"] = subject
    if payload is not None:
        request["payload"] = payload
    return answer_text(call(request))


def spawn(kind: str, text: str, input: Any = None, name: str | None = None) -> str:
    """Starts a child run and returns its run id, without waiting for it.

    ``kind`` is ``'script'`` (the text runs with bash; a ``name`` with another extension, such as
    ``child.py``, picks another interpreter) or ``'pipeline'`` (a YAML document; a graph document
    runs as a graph). ``input`` is the child's input, any JSON value.
    """
    if kind == "script":
        workflow = name or "child.sh"
        interpreter = _INTERPRETERS.get(os.path.splitext(workflow)[1].lower())
        if interpreter is None:
            raise ScriptError(
                "usage", f"spawn cannot tell how to run {workflow}: its extension picks the interpreter ({', '.join(_INTERPRETERS)})"
            )
    elif kind == "pipeline":
        workflow, interpreter = name or "child.yaml", "pipeline"
    else:
        raise ScriptError("usage", f"spawn takes 'script' or 'pipeline' as its kind, not {kind!r}")
    request: Message = {"verb": "spawn", "workflow": workflow, "script": text, "interpreter": interpreter}
    if input is not None:
        request["input"] = input
    return answer_text(call(request))


def output_set(key: str, value: Any) -> None:
    """Sets one of the run's outputs: a string as it is, any other value as its JSON."""
    call({"verb": "output.set", "key": key, "value": encode_value(value, "output_set")})


def annotate(text: str) -> None:
    """Adds a line to the run's annotations, shown with its status."""
    call({"verb": "annotate", "text": text})
