"""Durable steps: a command (step), a function of the script's own (step_fn), and the run's lock."""

from __future__ import annotations

import binascii
import json
import os
import sys
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Callable, Literal, TypeVar, Union, cast, overload

from .answers import call, exit_code, ok
from .connection import Message, connection
from .errors import ScriptError, StepFailed

__all__ = ["JsonValue", "StepResult", "step", "step_fn", "lock", "Lock"]

JsonValue = Union[None, bool, int, float, str, Sequence["JsonValue"], Mapping[str, "JsonValue"]]
"""What a step_fn may return: what JSON holds. A tuple comes back as a list; a set, a date or an
object of your own is refused."""

J = TypeVar("J", bound=JsonValue)


class StepResult:
    """An unchecked step's outcome: its stdout and exit code, whatever the code. Immutable, compared
    by value. (A plain class, not a dataclass: ``dataclasses`` imports ``inspect``, which alone cost
    more than the rest of the SDK's import.)"""

    __slots__ = ("stdout", "exit_code")
    stdout: str
    exit_code: int

    def __init__(self, stdout: str, exit_code: int) -> None:
        object.__setattr__(self, "stdout", stdout)
        object.__setattr__(self, "exit_code", exit_code)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"StepResult is immutable: cannot set {name}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StepResult):
            return NotImplemented
        return (self.stdout, self.exit_code) == (other.stdout, other.exit_code)

    def __hash__(self) -> int:
        return hash((self.stdout, self.exit_code))

    def __repr__(self) -> str:
        return f"StepResult(stdout={self.stdout!r}, exit_code={self.exit_code!r})"


def _argv(verb: str, argv: Sequence[str]) -> list[str]:
    # A string is a Sequence[str] too, and would run its first letter: refuse it before recording.
    if isinstance(argv, str) or not argv or not all(isinstance(a, str) for a in argv):
        raise ScriptError("usage", f"{verb} takes the command as a non-empty list of strings, e.g. ['make', 'release']")
    return list(argv)


def run_command(argv: list[str], idempotency_key: str | None, traceparent: str | None = None) -> StepResult:
    """Runs argv with no shell: stdin and stderr inherited, stdout captured. With tracing on, the
    execute answer's traceparent names the step's span: as TRACEPARENT, a command that traces joins
    the run's trace, as under the spool step verb (docs/tracing.md)."""
    # Imported here: a script of step_fn and waits alone never starts a process (issue 32).
    import signal
    import subprocess

    env = dict(os.environ)
    if idempotency_key:
        env["SPOOL_IDEMPOTENCY_KEY"] = idempotency_key
    if traceparent:
        env["TRACEPARENT"] = traceparent
    try:
        done = subprocess.run(argv, stdout=subprocess.PIPE, env=env, check=False)
    except OSError as error:
        missing = isinstance(error, FileNotFoundError)
        sys.stderr.write(f"spool: cannot run '{argv[0]}': {'command not found' if missing else error.strerror}\n")
        return StepResult("", 127 if missing else 126)
    code = done.returncode
    if code < 0:
        code = 128 + signal.Signals(-code).value
    # surrogateescape: bytes that are not UTF-8 survive in the str and encode back exactly (output_bytes).
    return StepResult(done.stdout.decode("utf-8", errors="surrogateescape"), code)


@overload
def step(name: str, argv: Sequence[str], check: Literal[True] = True) -> str: ...
@overload
def step(name: str, argv: Sequence[str], check: Literal[False]) -> StepResult: ...
@overload
def step(name: str, argv: Sequence[str], check: bool) -> str | StepResult: ...


def step(name: str, argv: Sequence[str], check: bool = True) -> str | StepResult:
    """Runs a command as a durable step and returns its stdout.

    The first time, ``argv`` runs (no shell; ``SPOOL_IDEMPOTENCY_KEY`` set) and its stdout and exit
    code are recorded under ``name``; on every replay the recorded result comes back and nothing
    runs. A non-zero exit raises StepFailed; with ``check=False`` a StepResult is returned instead.
    """
    command = _argv("step", argv)
    conn = connection()
    answer = conn.request({"verb": "step", "name": name})
    if answer.get("status") == "execute":
        result = run_command(command, _text(answer, "idempotencyKey"), _text(answer, "traceparent"))
        ok(conn.request({"verb": "done", "position": answer.get("position"), **output_field(result.stdout), "exitCode": result.exit_code}))
    else:
        answer = ok(answer)
        result = StepResult(output_of(answer), exit_code(answer))
    if not check:
        return result
    if result.exit_code != 0:
        raise StepFailed(name, result.exit_code, result.stdout)
    return result.stdout


def output_field(stdout: str) -> Message:
    """What a step printed as the done request carries it: text, or its exact bytes as base64 when
    it is not plain text (NUL, bytes that are not UTF-8, kept in the str by surrogateescape)."""
    raw = stdout.encode("utf-8", errors="surrogateescape")
    if b"\0" not in raw and _is_utf8(raw):
        return {"stdout": stdout}
    # binascii, not base64: the same encoding, without base64's import of struct and re.
    return {"stdoutBase64": binascii.b2a_base64(raw, newline=False).decode("ascii")}


def output_of(answer: Message) -> str:
    """A recorded step's stdout as the first pass returned it: the same str, byte for byte."""
    encoded = answer.get("stdoutBase64")
    if isinstance(encoded, str):
        return binascii.a2b_base64(encoded).decode("utf-8", errors="surrogateescape")
    return str(answer.get("stdout") or "")


def _is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def _text(answer: Message, field: str) -> str | None:
    value = answer.get(field)
    return value if isinstance(value, str) else None


def step_fn(name: str, fn: Callable[[], J]) -> J:
    """Runs ``fn`` once as a durable step and returns its value, recorded as JSON.

    On every replay the recorded value comes back and ``fn`` does not run. What comes back is the
    value as JSON gives it, on the first pass too: a tuple as a list. A value JSON cannot hold
    raises ScriptError naming the step. If ``fn`` raises, nothing is recorded and its exception
    reaches you; the next pass runs it again, so keep it safe to retry.
    """
    conn = connection()
    answer = conn.request({"verb": "step_fn", "name": name})
    if answer.get("status") != "execute":
        return cast(J, ok(answer).get("value"))
    value = fn()
    try:
        encoded = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ScriptError(
            "usage",
            f"step_fn '{name}' returned a value JSON cannot hold ({error}): return dicts, lists, strings, "
            "numbers, booleans or None, and nothing was recorded",
        ) from None
    recorded = json.loads(encoded)
    inexact = _inexact_integer(recorded)
    if inexact is not None:
        raise ScriptError(
            "usage",
            f"step_fn '{name}' returned the integer {inexact}, which the journal cannot keep exactly (its numbers "
            "are doubles, exact to 2^53): return it as a string, and nothing was recorded",
        )
    ok(conn.request({"verb": "done", "position": answer.get("position"), "value": recorded}))
    return cast(J, recorded)


# The largest integer a double holds exactly: the engine keeps JSON numbers as doubles.
MAX_EXACT_INTEGER = 2**53 - 1


def _inexact_integer(value: object) -> int | None:
    """An integer a replay would get back rounded, so the first pass and the replays would differ."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if abs(value) > MAX_EXACT_INTEGER else None
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for child in children:
        found = _inexact_integer(child)
        if found is not None:
            return found
    return None


class Lock:
    """The run's lease on a group, already granted. ``with`` marks the section that needs it;
    leaving the block does not release it (the lease is the run's until the run ends)."""

    def __init__(self, group: str) -> None:
        self.group = group

    def __enter__(self) -> Lock:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> Literal[False]:
        return False


def lock(group: str) -> Lock:
    """Takes the run's durable, project-scoped lease on ``group``: ``with script.lock("deploy"):``.

    On a held group the run waits (holding no agent) until the lease is granted, in arrival order,
    and the body does not run until then. The lease belongs to the run: it stays held after the
    body and passes to the next waiter when the run ends, so a second lock in one run is refused
    (ScriptError). The lease is taken when ``lock`` is called, with or without ``with``.
    """
    call({"verb": "lock", "group": group, "command": False})
    return Lock(group)
