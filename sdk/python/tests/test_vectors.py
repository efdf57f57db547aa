"""The shared protocol vectors (sdk/testdata/README.md), replayed against a scripted fake agent."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any, Callable, NoReturn

import pytest

from fake_agent import FakeAgent, canonical
from hyperspool import answers, connection, script
from hyperspool.errors import AgentUnavailable, ScriptError, StepFailed

VECTORS = Path(__file__).resolve().parents[2] / "testdata" / "vectors"


def load() -> list[Any]:
    found = []
    for file in sorted(VECTORS.glob("*.json")):
        for vector in json.loads(file.read_text())["vectors"]:
            found.append(pytest.param(vector, id=f"{file.stem}: {vector['name']}"))
    return found


class Suspended(BaseException):
    """Stands in for the process being ended; a BaseException so no ordinary except can take it."""


class FunctionFailed(Exception):
    """The step_fn function's own error."""


class Counters:
    function_calls = 0
    body_runs = False


def step_fn_body(call: dict[str, Any], counters: Counters) -> Callable[[], Any]:
    def body() -> Any:
        counters.function_calls += 1
        if "throws" in call:
            raise FunctionFailed(call["throws"])
        if call.get("returnsNonJson"):
            return {"when": {1, 2}}
        return call["returns"]

    return body


def invoke(call: dict[str, Any], counters: Counters) -> Any:
    """Makes the vector's call through the SDK, by its Python name and arguments."""
    fn = call["fn"]
    if fn == "step":
        result = script.step(call["name"], call["argv"], check=call.get("check", True))
        if isinstance(result, script.StepResult):
            return {"stdout": result.stdout, "exitCode": result.exit_code}
        return result
    if fn == "step_fn":
        return script.step_fn(call["name"], step_fn_body(call, counters))
    if fn == "sleep":
        return script.sleep(call["seconds"])
    if fn == "wait_signal":
        return script.wait_signal(call["name"], timeout=call.get("timeoutSeconds"))
    if fn == "wait_event":
        return script.wait_event(call["type"], timeout=call.get("timeoutSeconds"))
    if fn == "lock":
        with script.lock(call["group"]):
            counters.body_runs = True
        return None
    if fn in ("activity", "activity_submit"):
        options: dict[str, Any] = {}
        for field, keyword in (("requires", "requires"), ("retries", "retries"), ("retryBackoffSeconds", "retry_backoff"), ("retryOnExit", "retry_on_exit")):
            if field in call:
                options[keyword] = call[field]
        run = script.activity if fn == "activity" else script.activity_submit
        return run(call["name"], call["argv"], **options)
    if fn == "activity_collect":
        return script.activity_collect(call["name"])
    if fn == "activity_wait_all":
        return script.activity_wait_all()
    if fn == "emit":
        return script.emit(call["type"], payload=call.get("payload"), subject=call.get("subject"))
    if fn == "spawn":
        return script.spawn(call["kind"], call["text"], input=call.get("input"))
    if fn in ("state_get", "state_delete"):
        getter = script.state_get if fn == "state_get" else script.state_delete
        return getter(call["key"], entity=call.get("entity"))
    if fn == "state_set":
        return script.state_set(call["key"], call["value"], entity=call.get("entity"))
    if fn == "state_add":
        return script.state_add(call["key"], call.get("value"), entity=call.get("entity"))
    if fn == "state_list":
        return script.state_list(call.get("prefix"), entity=call.get("entity"))
    if fn == "output_set":
        return script.output_set(call["key"], call["value"])
    if fn == "annotate":
        return script.annotate(call["text"])
    raise AssertionError(f"the Python SDK has no call for vector fn {fn!r}")


def check_raised(outcome: dict[str, Any], error: BaseException) -> None:
    kind = outcome["raises"]
    if kind == "StepFailed":
        assert isinstance(error, StepFailed), repr(error)
        assert (error.exit_code, error.stdout) == (outcome["exitCode"], outcome["stdout"])
    elif kind == "ScriptError":
        assert isinstance(error, ScriptError), repr(error)
        assert error.kind == outcome["kind"]
        assert outcome["message"] in error.message
        assert outcome["message"] in str(error)
    elif kind == "AgentUnavailable":
        assert isinstance(error, AgentUnavailable), repr(error)
    elif kind == "function":
        assert type(error) is FunctionFailed, repr(error)
        assert str(error) == outcome["message"]
    else:
        raise AssertionError(f"unknown outcome {kind!r}")


@pytest.mark.parametrize("vector", load())
def test_vector(vector: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def block() -> NoReturn:
        raise Suspended()

    monkeypatch.setattr(answers, "block_until_ended", block)
    outcome = vector["outcome"]
    counters = Counters()
    with tempfile.TemporaryDirectory(prefix="spool-vec-") as scratch:
        path = str(Path(scratch) / "agent.sock")
        monkeypatch.setenv("SPOOL_SOCKET", path)
        monkeypatch.setenv("SPOOL_CONNECT_ATTEMPTS", "1")
        agent = FakeAgent(path, vector["exchanges"])
        result: Any = None
        raised: BaseException | None = None
        try:
            result = invoke(vector["call"], counters)
        except BaseException as error:  # noqa: BLE001 - the outcome decides what was expected
            raised = error
        finally:
            connection.reset()
            errors = agent.finish()
    assert errors == []
    if "suspends" in outcome:
        assert isinstance(raised, Suspended), f"expected a suspension, got {raised!r} / {result!r}"
        assert "spool: script suspended awaiting" in capsys.readouterr().err
    elif "raises" in outcome:
        assert raised is not None and not isinstance(raised, Suspended), f"expected {outcome['raises']}, returned {result!r}"
        check_raised(outcome, raised)
    else:
        assert raised is None, f"expected a return, raised {raised!r}"
        assert canonical(result) == canonical(outcome["returns"])
    if "functionCalls" in outcome:
        assert counters.function_calls == outcome["functionCalls"]
    if "bodyRuns" in outcome:
        assert counters.body_runs == outcome["bodyRuns"]
