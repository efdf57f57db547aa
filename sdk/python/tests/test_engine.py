"""The SDK against the real engine: scripts run to the end by `spool run`, journals read back."""

from __future__ import annotations

import hashlib
import http.server
import re
import threading
from pathlib import Path

from conftest import Engine
from engine import require_engine, script_env, spool


def test_a_function_that_raises_records_nothing_and_its_own_error_reaches_the_script(engine: Engine) -> None:
    run = engine.runs["raises"]
    assert run.exit_code != 0
    assert run.stdout.count("charging") == 1
    assert "caught CardDeclined: card declined" in run.stdout
    # Neither its call nor a result: the next pass runs it again (a fresh call's entry is written with its result).
    assert run.calls("step_fn", "charge") == []
    assert run.results("step_fn", "charge") == []


def test_a_value_json_cannot_hold_fails_naming_the_step(engine: Engine) -> None:
    run = engine.runs["not_json"]
    assert run.exit_code != 0
    assert "refused: usage: step_fn 'when' returned a value JSON cannot hold" in run.stdout
    assert run.results("step_fn", "when") == []


def test_a_blanket_except_around_sleep_does_not_carry_the_script_past_the_wait(engine: Engine) -> None:
    run = engine.runs["blanket_except"]
    assert run.exit_code == 0, run.stderr
    assert "swallowed" not in run.stdout
    starts = re.findall(r"pass (\d+) starts", run.stdout)
    past = re.findall(r"past the wait in pass (\d+)", run.stdout)
    assert len(starts) == 2 and len(past) == 1
    assert past[0] == starts[1]


def test_a_second_lock_in_one_run_is_refused(engine: Engine) -> None:
    run = engine.runs["second_lock"]
    assert run.exit_code == 0, run.stderr
    assert "holding deploy" in run.stdout
    assert "the second body ran" not in run.stdout
    assert "refused: usage: this run already holds the lock 'deploy'" in run.stdout
    assert len(run.results("lock", "deploy")) == 1


def test_a_bounded_wait_that_times_out_returns_none(engine: Engine) -> None:
    run = engine.runs["timeout"]
    assert run.exit_code == 0, run.stderr
    assert "payload: None" in run.stdout


def test_a_function_runs_once_across_passes_and_replays_its_recorded_value(engine: Engine) -> None:
    run = engine.runs["once"]
    assert run.exit_code == 0, run.stderr
    deployed = re.findall(r"deploying in pass (\d+)", run.stdout)
    assert len(deployed) == 1
    final = re.findall(r"pass (\d+) has the value from pass (\d+): https://pr-7.preview", run.stdout)
    assert len(final) == 1 and final[0][1] == deployed[0] and final[0][0] != deployed[0]
    [result] = run.results("step_fn", "deploy")
    assert result["data"]["value"] == {"url": "https://pr-7.preview", "pass": int(deployed[0])}


def test_an_artifact_put_in_one_pass_is_got_back_in_the_next_and_its_replayed_put_sends_nothing(engine: Engine) -> None:
    run = engine.runs["artifacts"]
    assert run.exit_code == 0, run.stderr
    assert "pass 2: sha256 matches" in run.stdout
    assert "listed: [('models/model.bin', 1300000)]" in run.stdout
    assert "refused: usage: no artifact 'nope' in this run (it has 'models/model.bin')" in run.stdout
    [result] = run.results("artifact.put", "models/model.bin")
    assert result["data"]["size"] == 1_300_000


CHECKOUT_FLOW = """
import hashlib, os
from hyperspool import script
from hyperspool.errors import ScriptError

files = script.checkout("src")
data = open("src/data/blob.bin", "rb").read()
executable = os.access("src/tool.sh", os.X_OK)
print(f"pass {os.environ['SPOOL_PASS']}: {files} files, blob {hashlib.sha256(data).hexdigest()[:12]}, tool executable {executable}", flush=True)
script.sleep(0.001)
"""

NO_BUNDLE_FLOW = """
from hyperspool import script
from hyperspool.errors import ScriptError

try:
    script.checkout()
except ScriptError as error:
    print(f"refused: {error.kind}: {error.message}", flush=True)
"""


def test_checkout_gives_every_pass_in_a_new_directory_the_bundled_files_byte_for_byte(tmp_path: Path) -> None:
    require_engine()
    bundle = tmp_path / "bundle"
    (bundle / "data").mkdir(parents=True)
    blob = bytes(range(256)) * 4000 + b"\xff\xfe\x00"
    (bundle / "data" / "blob.bin").write_bytes(blob)
    (bundle / "tool.sh").write_text("echo tool\n")
    (bundle / "tool.sh").chmod(0o755)
    (tmp_path / "flow.py").write_text(CHECKOUT_FLOW)
    done = spool("run", "flow.py", "--with", "bundle", "--fresh-dir", "--data-dir", str(tmp_path / "data"), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    digest = hashlib.sha256(blob).hexdigest()[:12]
    # Each pass runs in a new, empty directory (as each pod does), so both unpacked the bundle.
    assert f"pass 1: 2 files, blob {digest}, tool executable True" in done.stdout
    assert f"pass 2: 2 files, blob {digest}, tool executable True" in done.stdout


def test_checkout_in_a_run_without_a_bundle_is_refused_as_usage(tmp_path: Path) -> None:
    require_engine()
    (tmp_path / "flow.py").write_text(NO_BUNDLE_FLOW)
    done = spool("run", "flow.py", "--data-dir", str(tmp_path / "data"), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "refused: usage: this run has no checkout: start it with 'spool run FILE --with DIR'" in done.stdout


CALL_NODE_FLOW = """
import os
from hyperspool import script
from hyperspool.errors import StepFailed

url = os.environ["COUNTER_URL"]
script.checkout()
charge = script.call_node("http", {"method": "POST", "url": url, "headers": {"Idempotency-Key": {"$expr": "node.idempotency_key"}}}, name="charge")
print(f"pass {os.environ['SPOOL_PASS']}: charge {charge['status']} {charge['body']}", flush=True)
try:
    script.call_node("http", {"url": url + "/missing"}, name="missing")
except StepFailed as error:
    print(f"failed: {error}", flush=True)
outputs = script.call_graph("tiny.json", {"x": "5"})
print(f"pass {os.environ['SPOOL_PASS']}: graph {outputs}", flush=True)
script.sleep(0.001)
"""

TINY_GRAPH = '{"nodes": [{"id": "one", "type": "script", "config": {"interpreter": "bash", "body": "true"}}], "outputs": {"y": {"$expr": "input.x"}}}\n'


def test_call_node_sends_once_across_passes_and_call_graph_returns_the_graphs_outputs(tmp_path: Path) -> None:
    require_engine()
    keys: list[str] = []

    class Counter(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            keys.append(self.headers.get("Idempotency-Key", ""))
            self._answer(200, b'{"charged": true}')

        def do_GET(self) -> None:
            self._answer(404, b"no")

        def _answer(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Counter)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        (tmp_path / "flow.py").write_text(CALL_NODE_FLOW)
        (tmp_path / "bundle").mkdir()
        (tmp_path / "bundle" / "tiny.json").write_text(TINY_GRAPH)
        env = script_env(COUNTER_URL=f"http://127.0.0.1:{server.server_address[1]}")
        done = spool("run", "flow.py", "--with", "bundle", "--fresh-dir", "--data-dir", str(tmp_path / "data"), cwd=tmp_path, env=env)
    finally:
        server.shutdown()
    assert done.returncode == 0, done.stdout + done.stderr
    # Two passes (the sleep), each in a new directory: the charge was sent once, with the node's key.
    assert "pass 1: charge 200 {'charged': True}" in done.stdout
    assert "pass 2: charge 200 {'charged': True}" in done.stdout
    assert len(keys) == 1 and keys[0].startswith("spool-")
    assert "failed: step 'missing' exited with 1" in done.stdout
    assert "pass 2: graph {'y': 5}" in done.stdout
