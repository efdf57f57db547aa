"""Durable waits: a timer, a signal, an event. A wait that cannot return yet suspends the run."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Union

from .answers import call, exit_code, parse_value, require, text
from .connection import Message
from .errors import ScriptError

if TYPE_CHECKING:
    # Only for the annotation: a script that passes a timedelta has imported datetime already.
    from datetime import timedelta

__all__ = ["Duration", "to_ms", "sleep", "wait_signal", "wait_event"]

Duration = Union[int, float, "timedelta"]
"""Seconds, or a timedelta; sent as whole milliseconds."""

TIMED_OUT = 124


def to_ms(duration: Duration, what: str) -> int:
    seconds: object = duration
    if not isinstance(duration, (int, float)):
        from datetime import timedelta

        if isinstance(duration, timedelta):
            seconds = duration.total_seconds()
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) or seconds < 0:
        raise ScriptError("usage", f"{what} takes a duration: seconds (a number, 0 or more) or a timedelta, not {duration!r}")
    return round(seconds * 1000)


def sleep(duration: Duration) -> None:
    """Sleeps durably: the run holds no process while it waits, and a replay past the time returns
    at once. ``duration`` is seconds or a timedelta."""
    call({"verb": "sleep", "ms": to_ms(duration, "sleep")})


def _bounded(request: Message, what: str, timeout: Duration | None) -> Message | None:
    if timeout is not None:
        request["timeoutMs"] = to_ms(timeout, what)
        require(str(request["verb"]), f"{what} with a timeout")
    answer = call(request)
    code = exit_code(answer)
    if code == TIMED_OUT:
        return None
    if code != 0:
        raise ScriptError("internal", f"{what}: the agent answered exit code {code}: {answer.get('stderr', '')}", code)
    return answer


def wait_signal(name: str, timeout: Duration | None = None) -> str | None:
    """Waits for the signal ``name`` (``spool signal RUN NAME PAYLOAD``) and returns its payload
    text. With ``timeout`` (seconds or a timedelta), returns None when the deadline passes first."""
    answer = _bounded({"verb": "wait.signal", "name": name}, "wait_signal", timeout)
    return None if answer is None else text(answer)


def wait_event(type: str, timeout: Duration | None = None) -> Any:
    """Waits for an event of ``type`` and returns its payload as parsed JSON (None when it has
    none). With ``timeout`` (seconds or a timedelta), returns None when the deadline passes first."""
    answer = _bounded({"verb": "wait.event", "type": type}, "wait_event", timeout)
    return None if answer is None else parse_value(text(answer))
