"""The exceptions a durable call raises: every failure is one of three kinds (docs/sdks.md)."""

from __future__ import annotations

__all__ = ["HyperspoolError", "StepFailed", "ScriptError", "AgentUnavailable"]


class HyperspoolError(Exception):
    """Base of the SDK's exceptions. Catch a subclass, never this: a broad catch swallows
    AgentUnavailable, which must end the script."""


class StepFailed(HyperspoolError):
    """A step or activity ran and its command exited non-zero.

    Branch on it if you like (or use ``step(..., check=False)``); replaying records the same
    failure again, so retrying the call in place does not help.
    """

    def __init__(self, name: str, exit_code: int, stdout: str, detail: str | None = None) -> None:
        self.name = name
        self.exit_code = exit_code
        self.stdout = stdout
        what = "the activities" if name == "*" else f"step '{name}'"
        message = f"{what} exited with {exit_code}"
        super().__init__(f"{message}: {detail}" if detail else message)


class ScriptError(HyperspoolError):
    """The agent refused the call, or the SDK refused it before sending: a bug in the script.

    ``kind`` is ``usage``, ``determinism``, ``limit`` or ``internal``. Replaying will not fix it,
    so let it fail the run rather than catching it around a durable call.
    """

    def __init__(self, kind: str, message: str, exit_code: int = 2) -> None:
        self.kind = kind
        self.message = message
        self.exit_code = exit_code
        super().__init__(message)


class AgentUnavailable(HyperspoolError):
    """There is no agent to talk to, or it went away mid-call.

    The run is handed to another agent and replays from the top. Never catch this and carry on;
    re-raise it from any catch-all around a durable call.
    """
