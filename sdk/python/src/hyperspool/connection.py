"""The one connection a script process keeps to its agent, on $SPOOL_SOCKET."""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from typing import Any

from .errors import AgentUnavailable

__all__ = ["Connection", "connection", "reset"]

Message = dict[str, Any]

_DEFAULT_ATTEMPTS = 5
_DEFAULT_BACKOFF_MS = 50


class Connection:
    """Requests answered one at a time, in order: a durable call's identity is its place here."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._reader = sock.makefile("rb")
        self._broken = False
        self.capabilities: tuple[int, frozenset[str]] | None = None

    def request(self, request: Message) -> Message:
        """Sends one request and reads its answer. Never sends it twice: a request that may have
        reached the agent could have been recorded, so only a replay may make it again."""
        if self._broken:
            raise AgentUnavailable("the agent went away during an earlier call; the run replays elsewhere")
        # The agent may end this process at any wait; output still in Python's buffers would be lost.
        _flush()
        line = json.dumps(request, ensure_ascii=False, separators=(",", ":")) + "\n"
        try:
            self._sock.sendall(line.encode("utf-8"))
            answer = self._reader.readline()
        except OSError as error:
            self._broken = True
            raise AgentUnavailable(f"the agent went away during the call: {error}") from None
        if not answer.endswith(b"\n"):
            self._broken = True
            raise AgentUnavailable("the agent went away during the call")
        try:
            decoded = json.loads(answer)
        except ValueError:
            self._broken = True
            raise AgentUnavailable("the agent sent an answer that is not JSON") from None
        if not isinstance(decoded, dict):
            self._broken = True
            raise AgentUnavailable("the agent sent an answer that is not a JSON object")
        return decoded

    def close(self) -> None:
        self._broken = True
        try:
            self._reader.close()
            self._sock.close()
        except OSError:
            pass


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


def _env_int(name: str, default: int, least: int) -> int:
    try:
        return max(least, int(os.environ.get(name, "")))
    except ValueError:
        return default


def _connect(path: str) -> Connection:
    attempts = _env_int("SPOOL_CONNECT_ATTEMPTS", _DEFAULT_ATTEMPTS, 1)
    delay = _env_int("SPOOL_CONNECT_BACKOFF_MS", _DEFAULT_BACKOFF_MS, 0) / 1000
    last: OSError | None = None
    for attempt in range(attempts):
        if attempt:
            time.sleep(delay)
            delay *= 2
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(path)
            return Connection(sock)
        except OSError as error:
            sock.close()
            last = error
    raise AgentUnavailable(f"cannot reach the agent at {path} after {attempts} attempts: {last}")


_current: Connection | None = None
_owner_pid = 0


def connection() -> Connection:
    """This process's connection, opened at its first durable call."""
    global _current, _owner_pid
    # A forked child must not write into its parent's stream: its answers would go astray.
    if _current is None or _owner_pid != os.getpid():
        path = os.environ.get("SPOOL_SOCKET")
        if not path:
            raise AgentUnavailable(
                "SPOOL_SOCKET is not set: durable calls run inside a script started by spool run, "
                "spool submit or a cluster run"
            )
        _current = _connect(path)
        _owner_pid = os.getpid()
    return _current


def reset() -> None:
    """Closes the connection, so the next durable call opens a new one (for tests)."""
    global _current
    if _current is not None and _owner_pid == os.getpid():
        _current.close()
    _current = None
