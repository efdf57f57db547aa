"""The seed's preview-environment workflow, examples/preview.py, under `spool dev`."""

from __future__ import annotations

import json
import re
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Callable

from conftest import Engine
from engine import REPO

EXAMPLE = REPO / "examples" / "preview.py"


def run_of(engine: Engine, run_id: str) -> dict[str, Any]:
    url = f"{engine.dev.url}/v1/runs/{urllib.parse.quote(run_id, safe='')}"
    with urllib.request.urlopen(url, timeout=10) as answer:
        run: dict[str, Any] = json.load(answer)["run"]
    return run


def until(engine: Engine, run_id: str, done: Callable[[dict[str, Any]], bool], seconds: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while True:
        run = run_of(engine, run_id)
        if done(run):
            return run
        assert time.monotonic() < deadline, f"the run did not get there: {run}"
        assert run["status"] not in ("succeeded", "failed", "cancelled"), f"the run ended: {run}"
        time.sleep(0.25)


def processes_running(script_dir_part: str) -> list[str]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if script_dir_part in text:
            found.append(text)
    return found


def test_the_preview_workflow_deploys_once_waits_with_no_process_and_tears_down_what_it_deployed(engine: Engine) -> None:
    submitted = engine.dev.spool("submit", str(EXAMPLE), cwd=engine.scratch)
    assert submitted.returncode == 0, submitted.stderr
    run_id = submitted.stdout.strip()

    waiting = until(engine, run_id, lambda run: run["status"] == "waiting")
    assert waiting["awaiting"].startswith("event pr.closed")
    assert waiting["passes"] == 1
    assert processes_running(re.sub(r"[^a-z0-9-]", "_", run_id, flags=re.I)) == []

    emitted = engine.dev.spool("event", "emit", "pr.closed", "--payload", '{"pr": 7}')
    assert emitted.returncode == 0, emitted.stderr
    finished = until(engine, run_id, lambda run: run["status"] == "succeeded")
    assert finished["passes"] == 2

    logs = engine.dev.spool("logs", run_id).stdout
    assert logs.count("deploying a preview to pr-7.preview.example") == 1
    assert logs.count("tearing down https://pr-7.preview.example") == 1
    journal = engine.dev.json("journal", run_id)
    deployed = [e for e in journal if e["kind"] == "result" and e["name"] == "deploy"]
    assert [e["data"]["value"] for e in deployed] == [{"host": "pr-7.preview.example", "url": "https://pr-7.preview.example"}]
    assert [e["verb"] for e in journal if e["kind"] == "result"] == ["step_fn", "wait.event", "step_fn"]
