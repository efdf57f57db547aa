"""Recorded calls that reach past the run: events, child runs, outputs and annotations."""

from __future__ import annotations

import json
import os
from typing import Any

from .answers import call, encode_value, exit_code, parse_value
from .answers import text as answer_text
from .connection import Message
from .errors import ScriptError, StepFailed

__all__ = ["emit", "spawn", "call_node", "call_graph", "output_set", "annotate"]

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


def call_node(type: str, config: dict[str, Any], name: str | None = None) -> Any:
    """Runs one graph node kind (``http``, ``script``, ``call``, ``approval``, ``wait``, ``sleep``;
    docs/graphs.md) as durable calls of this run and returns its output, as ``spool call-node``
    does. Any value in ``config`` may be ``{"$expr": "..."}`` over ``input`` and ``node``
    (``node.idempotency_key`` is this call's, stable across replays). A failed node raises
    ``StepFailed``; a config the kind does not take, ``ScriptError`` (usage)."""
    request: Message = {"verb": "call.node", "type": type, "config": config}
    if name is not None:
        request["name"] = name
    answer = call(request)
    stdout = str(answer.get("stdout", ""))
    if exit_code(answer) != 0:
        raise StepFailed(name or type, exit_code(answer), stdout, str(answer.get("stderr", "")) or None)
    return json.loads(stdout) if stdout.strip() else None


def call_graph(path: str | os.PathLike[str], input: Any = None) -> dict[str, Any]:
    """Runs the graph document at ``path`` as a child run, waits for it, and returns its outputs
    (JSON values parsed), as ``spool call-graph`` does. The file is read now (the run records the
    graph it started); a replayed call needs no file. A failed graph raises ``StepFailed``."""
    file = os.fspath(path)
    request: Message = {"verb": "call", "workflow": file, "script": "", "interpreter": "graph"}
    try:
        with open(file, encoding="utf-8") as source:
            request["script"] = source.read()
    except (OSError, UnicodeDecodeError) as error:
        # As the clients do: a recorded call is answered without the file, a new one is refused.
        request["unreadable"] = f"call_graph: cannot read {file}: {getattr(error, 'strerror', None) or error}"
    if input is not None:
        request["input"] = input
    answer = call(request)
    stdout = str(answer.get("stdout", ""))
    if exit_code(answer) != 0:
        raise StepFailed(file, exit_code(answer), stdout, str(answer.get("stderr", "")) or None)
    return {key: parse_value(value) for key, value in (json.loads(stdout) if stdout.strip() else {}).items()}


def output_set(key: str, value: Any) -> None:
    """Sets one of the run's outputs: a string as it is, any other value as its JSON."""
    call({"verb": "output.set", "key": key, "value": encode_value(value, "output_set")})


def annotate(text: str) -> None:
    """Adds a line to the run's annotations, shown with its status."""
    call({"verb": "annotate", "text": text})
