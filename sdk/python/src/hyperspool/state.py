"""Durable state cells: run-scoped by default, the project's cross-run scope with ``entity=``."""

from __future__ import annotations

from typing import Any

from .answers import call, encode_value, exit_code, parse_value, require, text
from .connection import Message
from .errors import ScriptError

__all__ = ["state_get", "state_set", "state_add", "state_delete", "state_list"]

TAKEN = 3


def _cell(verb: str, key: str, entity: str | None) -> Message:
    request: Message = {"verb": verb, "key": key}
    if entity is not None:
        request["entity"] = entity
    return request


def state_get(key: str, entity: str | None = None) -> Any:
    """The cell's value: its JSON when the stored text parses as JSON, else the text; None when
    the cell is absent. Live: read afresh on every pass, not recorded."""
    return parse_value(text(call(_cell("state.get", key, entity))))


def state_set(key: str, value: Any, entity: str | None = None) -> None:
    """Sets the cell: a string is stored as it is, any other value as its JSON."""
    request = _cell("state.set", key, entity)
    request["value"] = encode_value(value, "state_set")
    call(request)


def state_add(key: str, value: Any = None, entity: str | None = None) -> bool:
    """Sets the cell only if it is absent; True if this call added it (recorded, so a replay
    gives the same answer)."""
    request = _cell("state.add", key, entity)
    if value is not None:
        request["value"] = encode_value(value, "state_add")
    require("state.add", "state_add")
    answer = call(request)
    code = exit_code(answer)
    if code not in (0, TAKEN):
        raise ScriptError("internal", f"state_add: the agent answered exit code {code}", code)
    return code == 0


def state_delete(key: str, entity: str | None = None) -> None:
    """Deletes the cell; deleting an absent cell is not an error."""
    call(_cell("state.delete", key, entity))


def state_list(prefix: str | None = None, entity: str | None = None) -> dict[str, Any]:
    """The cells whose key starts with ``prefix`` (all without one), each value read as in state_get."""
    request: Message = {"verb": "state.list"}
    if prefix is not None:
        request["prefix"] = prefix
    if entity is not None:
        request["entity"] = entity
    cells: dict[str, Any] = {}
    for line in text(call(request)).split("\n"):
        if line:
            key, _, raw = line.partition("\t")
            cells[key] = parse_value(raw)
    return cells
