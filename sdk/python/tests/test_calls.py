"""Calls beyond the vectors: what Python adds (tuples, timedeltas, big integers, argument checks)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from fake_agent import FakeAgent
from hyperspool import connection, script
from hyperspool.errors import ScriptError

EXECUTE = {"status": "execute", "position": 0, "idempotencyKey": "spool-k"}
OK = {"status": "ok", "exitCode": 0}


@pytest.fixture
def agent(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Starts a fake agent for the exchanges the test gives it, and checks it when the test ends."""
    with tempfile.TemporaryDirectory(prefix="spool-calls-") as scratch:
        path = str(Path(scratch) / "agent.sock")
        monkeypatch.setenv("SPOOL_SOCKET", path)
        monkeypatch.setenv("SPOOL_CONNECT_ATTEMPTS", "1")
        started: list[FakeAgent] = []

        def start(*exchanges: dict[str, Any]) -> None:
            started.append(FakeAgent(path, list(exchanges)))

        yield start
        connection.reset()
        for fake in started:
            assert fake.finish() == []


def exchange(request: dict[str, Any], reply: dict[str, Any] | None) -> dict[str, Any]:
    return {"request": request, "reply": reply}


def test_a_tuple_comes_back_as_a_list_on_the_first_pass_too(agent: Any) -> None:
    agent(
        exchange({"verb": "step_fn", "name": "pair"}, EXECUTE),
        exchange({"verb": "done", "position": 0, "value": [1, "a"]}, OK),
    )
    assert script.step_fn("pair", lambda: (1, "a")) == [1, "a"]


def test_an_integer_a_double_cannot_hold_is_refused_before_done(agent: Any) -> None:
    agent(exchange({"verb": "step_fn", "name": "id"}, EXECUTE))
    with pytest.raises(ScriptError, match="step_fn 'id' returned the integer 9007199254740993") as raised:
        script.step_fn("id", lambda: {"ids": [2**53 + 1]})
    assert raised.value.kind == "usage"


def test_a_step_fn_function_and_a_lock_body_can_make_durable_calls(agent: Any) -> None:
    agent(
        exchange({"verb": "lock", "group": "tally", "command": False}, OK),
        exchange({"verb": "state.get", "key": "total", "entity": "tally"}, {"status": "ok", "stdout": "4\n", "exitCode": 0}),
        exchange({"verb": "step_fn", "name": "next"}, EXECUTE),
        exchange({"verb": "state.set", "key": "total", "value": "5", "entity": "tally"}, OK),
        exchange({"verb": "done", "position": 0, "value": 5}, OK),
    )
    with script.lock("tally"):
        n = script.state_get("total", entity="tally")

        def bump() -> int:
            script.state_set("total", n + 1, entity="tally")
            return int(n + 1)

        assert script.step_fn("next", bump) == 5


def test_durations_are_seconds_or_timedeltas_sent_as_whole_milliseconds(agent: Any) -> None:
    agent(
        exchange({"verb": "sleep", "ms": 90_000}, OK),
        exchange({"verb": "sleep", "ms": 1}, OK),
    )
    script.sleep(timedelta(minutes=1, seconds=30))
    script.sleep(0.0012)


def test_a_script_spawned_with_a_python_name_runs_with_python(agent: Any) -> None:
    request = {"verb": "spawn", "workflow": "child.py", "script": "print(1)\n", "interpreter": "python3"}
    agent(exchange(request, {"status": "ok", "stdout": "run-1\n", "exitCode": 0}))
    assert script.spawn("script", "print(1)\n", name="child.py") == "run-1"


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: script.step("x", "make release"), "non-empty list of strings"),
        (lambda: script.step("x", []), "non-empty list of strings"),
        (lambda: script.sleep(-1), "takes a duration"),
        (lambda: script.wait_signal("go", timeout=float("nan")), "takes a duration"),
        (lambda: script.activity_submit("a", ["true"], retries=-1), "retries="),
        (lambda: script.spawn("script", "x", name="child.rb"), "cannot tell how to run child.rb"),
        (lambda: script.state_set("k", {1, 2}), "state_set takes a string or a value JSON can hold"),
    ],
)
def test_bad_arguments_are_refused_before_anything_is_sent(agent: Any, call: Any, message: str) -> None:
    agent()
    with pytest.raises(ScriptError, match=message) as raised:
        call()
    assert raised.value.kind == "usage"
