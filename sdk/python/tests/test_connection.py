"""The connection and the suspension block, beyond what the vectors say."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fake_agent import FakeAgent
from hyperspool import connection, script
from hyperspool.errors import AgentUnavailable

SRC = str(Path(__file__).resolve().parents[1] / "src")
INFO = {"status": "ok", "stdout": '{"protocol":2,"verbs":["wait.signal","wait.event","state.add","activity.wait"]}\n', "exitCode": 0}


@pytest.fixture
def socket_path(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="spool-conn-") as scratch:
        path = str(Path(scratch) / "agent.sock")
        monkeypatch.setenv("SPOOL_SOCKET", path)
        yield path
        connection.reset()


def test_without_spool_socket_a_call_is_agent_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPOOL_SOCKET", raising=False)
    connection.reset()
    with pytest.raises(AgentUnavailable, match="SPOOL_SOCKET is not set"):
        script.annotate("x")


def test_connect_is_retried_until_the_agent_listens(socket_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPOOL_CONNECT_ATTEMPTS", "6")
    monkeypatch.setenv("SPOOL_CONNECT_BACKOFF_MS", "40")
    agents: list[FakeAgent] = []
    exchange = {"request": {"verb": "annotate", "text": "late"}, "reply": {"status": "ok", "exitCode": 0}}
    starter = threading.Timer(0.15, lambda: agents.append(FakeAgent(socket_path, [exchange])))
    starter.start()
    script.annotate("late")
    connection.reset()
    starter.join()
    assert agents[0].finish() == []


def test_connect_gives_up_after_its_attempts(socket_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPOOL_CONNECT_ATTEMPTS", "3")
    monkeypatch.setenv("SPOOL_CONNECT_BACKOFF_MS", "10")
    started = time.monotonic()
    with pytest.raises(AgentUnavailable, match="after 3 attempts"):
        script.annotate("nobody")
    assert time.monotonic() - started < 1


def test_capabilities_are_asked_once_per_connection(socket_path: str) -> None:
    def wait(payload: str) -> dict[str, Any]:
        return {
            "request": {"verb": "wait.signal", "name": "go", "timeoutMs": 500},
            "reply": {"status": "ok", "stdout": payload + "\n", "exitCode": 0},
        }

    agent = FakeAgent(socket_path, [{"request": {"verb": "agent.info"}, "reply": INFO}, wait("a"), wait("b")])
    assert script.wait_signal("go", timeout=0.5) == "a"
    assert script.wait_signal("go", timeout=0.5) == "b"
    connection.reset()
    assert agent.finish() == []


def test_after_a_drop_no_call_is_sent_again(socket_path: str) -> None:
    agent = FakeAgent(socket_path, [{"request": {"verb": "annotate", "text": "a"}, "reply": None}])
    with pytest.raises(AgentUnavailable):
        script.annotate("a")
    with pytest.raises(AgentUnavailable):
        script.annotate("b")
    connection.reset()
    assert agent.finish() == []


SUSPENDING_SCRIPT = """
import sys
from hyperspool import answers, script
from hyperspool.errors import ScriptError
answers.SUSPENSION_FALLBACK_SECONDS = float(sys.argv[1])
print("before", flush=True)
try:
    script.sleep(5)
except BaseException:
    pass
print("past the wait", flush=True)
"""


def suspending(socket_path: str, fallback: float) -> tuple[FakeAgent, subprocess.Popen[str]]:
    exchange = {"request": {"verb": "sleep", "ms": 5000}, "reply": {"status": "suspended", "message": "script suspended awaiting timer"}}
    agent = FakeAgent(socket_path, [exchange])
    env = {**os.environ, "PYTHONPATH": SRC, "SPOOL_SOCKET": socket_path}
    process = subprocess.Popen(
        [sys.executable, "-c", SUSPENDING_SCRIPT, str(fallback)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    return agent, process


def test_a_suspension_blocks_until_the_fallback_exit_75(socket_path: str) -> None:
    agent, process = suspending(socket_path, 0.3)
    out, err = process.communicate(timeout=20)
    assert process.returncode == 75
    assert out == "before\n"
    assert "spool: script suspended awaiting timer" in err
    assert agent.finish() == []


def test_a_suspended_script_ends_when_the_agent_ends_it(socket_path: str) -> None:
    agent, process = suspending(socket_path, 30)
    assert process.stderr is not None
    assert "suspended" in process.stderr.readline()
    process.send_signal(signal.SIGTERM)
    out, _ = process.communicate(timeout=20)
    assert process.returncode == -signal.SIGTERM
    assert out == "before\n"
    agent.finish()
