"""What the SDK makes of the agent's answers (docs/protocol.md), and the suspension block."""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, Callable, NoReturn

from .connection import Message, connection
from .errors import ScriptError

__all__ = ["call", "ok", "exit_code", "suspend", "block_until_ended", "require", "text", "parse_value", "encode_value"]

SUSPENSION_FALLBACK_SECONDS = 60
SUSPENSION_EXIT_CODE = 75
# What the calls that check the agent first (a bounded wait, state_add, activity_wait_all) need.
NEEDS_PROTOCOL = 1


def _wait_to_be_ended() -> NoReturn:
    deadline = time.monotonic() + SUSPENSION_FALLBACK_SECONDS
    try:
        while (remaining := deadline - time.monotonic()) > 0:
            time.sleep(remaining)
    except BaseException:
        # A signal handler of the script's raised (Ctrl-C, a SIGTERM handler): it wants the process
        # gone, and letting the exception travel up would run the script past an unfinished wait.
        pass
    os._exit(SUSPENSION_EXIT_CODE)


# The seam the tests replace: there is no agent ending their process.
block_until_ended: Callable[[], NoReturn] = _wait_to_be_ended


def suspend(message: str) -> NoReturn:
    """The call must wait and the agent is ending this process: block, neither return nor raise,
    so no ``except`` can carry the script past a wait that has not returned."""
    sys.stderr.write(f"spool: {message}\n")
    sys.stderr.flush()
    sys.stdout.flush()
    block_until_ended()


def ok(answer: Message) -> Message:
    """The answer if it is ``ok``; otherwise raises or suspends as its status says."""
    status = answer.get("status")
    if status == "ok":
        return answer
    if status == "suspended":
        suspend(str(answer.get("message", "script suspended")))
    if status == "error":
        raise ScriptError(
            str(answer.get("kind", "internal")),
            str(answer.get("message", "the agent refused the call")),
            _int(answer.get("exitCode"), 1),
        )
    raise ScriptError("internal", f"unexpected answer from the agent: {status}", 1)


def call(request: Message) -> Message:
    """Sends a request that must come back ``ok``."""
    return ok(connection().request(request))


def exit_code(answer: Message) -> int:
    return _int(answer.get("exitCode"), 0)


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default



def require(verb: str, what: str) -> None:
    """Fails at the call site when this connection's agent cannot serve ``verb``.

    Asked once per connection: an older agent would otherwise misread the call or wait forever.
    """
    conn = connection()
    if conn.capabilities is None:
        answer = conn.request({"verb": "agent.info"})
        protocol, verbs = 0, frozenset[str]()
        if answer.get("status") == "ok":
            try:
                info = json.loads(str(answer.get("stdout", "")))
                protocol = _int(info.get("protocol"), 0)
                verbs = frozenset(v for v in info.get("verbs", []) if isinstance(v, str))
            except (ValueError, AttributeError, TypeError):
                pass
        elif answer.get("status") == "suspended":
            suspend(str(answer.get("message", "script suspended")))
        conn.capabilities = (protocol, verbs)
    protocol, verbs = conn.capabilities
    if protocol < NEEDS_PROTOCOL:
        raise ScriptError(
            "usage",
            f"{what} needs an agent that speaks protocol {NEEDS_PROTOCOL} or later, and this one speaks "
            f"protocol {protocol}: update the agent that runs this script",
        )
    if verb not in verbs:
        raise ScriptError(
            "usage",
            f"{what} needs an agent that knows '{verb}', and this one (protocol {protocol}) does not: "
            "update the agent that runs this script",
        )


def text(answer: Message) -> str:
    """An answer's stdout without the one newline that ends it."""
    out = str(answer.get("stdout") or "")
    return out[:-1] if out.endswith("\n") else out


def _no_constants(name: str) -> NoReturn:
    raise ValueError(name)


def parse_value(raw: str) -> Any:
    """A stored value: its JSON when the text parses as JSON, else the text; None when empty."""
    if raw == "":
        return None
    try:
        return json.loads(raw, parse_constant=_no_constants)
    except ValueError:
        return raw


def encode_value(value: Any, what: str) -> str:
    """A value as the agent stores it: a string as it is, anything else as its JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ScriptError("usage", f"{what} takes a string or a value JSON can hold: {error}") from None
