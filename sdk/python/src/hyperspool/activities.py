"""Activities: commands the run hands to agents that have what they require, run apart from the script."""

from __future__ import annotations

from collections.abc import Sequence

from .answers import call, exit_code, require
from .connection import Message
from .errors import ScriptError, StepFailed
from .steps import output_of
from .waits import Duration, to_ms

__all__ = ["activity", "activity_submit", "activity_collect", "activity_wait_all"]


def _spec(
    verb: str,
    name: str,
    argv: Sequence[str],
    requires: Sequence[str],
    retries: int,
    retry_backoff: Duration,
    retry_on_exit: Sequence[int] | None,
) -> Message:
    what = "activity" if verb == "activity.run" else "activity_submit"
    if isinstance(argv, str) or not argv:
        raise ScriptError("usage", f"{what} takes the command as a non-empty list of strings, e.g. ['./probe', 'eu']")
    if isinstance(requires, str):
        raise ScriptError("usage", f"{what} takes requires= as a list of capabilities, e.g. ['shell']")
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ScriptError("usage", f"{what} takes retries= as a whole number, 0 or more, not {retries!r}")
    return {
        "verb": verb,
        "name": name,
        "argv": list(argv),
        "requires": list(requires),
        "attempts": retries + 1,
        "backoffMs": to_ms(retry_backoff, f"{what} retry_backoff="),
        "retryOnExit": None if retry_on_exit is None else list(retry_on_exit),
    }


def _stdout(name: str, answer: Message) -> str:
    # Output that is not plain text (a NUL, bytes that are not UTF-8) comes as stdoutBase64, kept
    # in the str by surrogateescape as a step's is.
    stdout = output_of(answer)
    code = exit_code(answer)
    if code != 0:
        raise StepFailed(name, code, stdout)
    return stdout


def activity(
    name: str,
    argv: Sequence[str],
    requires: Sequence[str] = (),
    retries: int = 0,
    retry_backoff: Duration = 1,
    retry_on_exit: Sequence[int] | None = None,
) -> str:
    """Runs ``argv`` as the activity ``name`` and waits for it: returns its stdout, raises
    StepFailed when it finally exits non-zero. The run holds no process while it waits."""
    return _stdout(name, call(_spec("activity.run", name, argv, requires, retries, retry_backoff, retry_on_exit)))


def activity_submit(
    name: str,
    argv: Sequence[str],
    requires: Sequence[str] = (),
    retries: int = 0,
    retry_backoff: Duration = 1,
    retry_on_exit: Sequence[int] | None = None,
) -> None:
    """Starts ``argv`` as the activity ``name`` without waiting; collect it with activity_collect.

    ``requires`` names the capabilities an agent needs to run it. A failed attempt is tried again
    up to ``retries`` more times, ``retry_backoff`` (seconds or a timedelta) apart, and, when
    ``retry_on_exit`` is given, only for those exit codes. Names are unique within a run.
    """
    call(_spec("activity.submit", name, argv, requires, retries, retry_backoff, retry_on_exit))


def activity_collect(name: str) -> str:
    """Waits for the submitted activity ``name``: returns its stdout, raises StepFailed when it
    exited non-zero."""
    return _stdout(name, call({"verb": "activity.wait", "name": name}))


def activity_wait_all() -> None:
    """Waits for every activity this run submitted; raises StepFailed (name ``*``) when any failed."""
    require("activity.wait", "activity_wait_all")
    answer = call({"verb": "activity.wait", "all": True})
    code = exit_code(answer)
    if code != 0:
        detail = str(answer.get("stderr") or "").removeprefix("spool: ") or None
        raise StepFailed("*", code, str(answer.get("stdout") or ""), detail)
