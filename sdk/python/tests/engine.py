"""The real engine for the tests: the Node CLI's spool run, and spool dev as a local server."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
SPOOL = REPO / "bin" / "spool"


def require_engine() -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the engine tests need the Node CLI")
    if not (REPO / "dist" / "cli" / "main.js").exists():
        pytest.fail("the engine is not built: run `npm run build` in the repository first")


def script_env(**extra: str) -> dict[str, str]:
    # No PYTHONPATH: the runner puts sdk/python/src on a script's path itself (the managed
    # environment), and these tests prove that a plain `import hyperspool` resolves.
    env = {**os.environ, **extra}
    for name in ("PYTHONPATH", "SPOOL_SOCKET", "VIRTUAL_ENV"):
        env.pop(name, None)
    return env


def spool(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["node", str(SPOOL), *args], cwd=cwd, env=env or script_env(), capture_output=True, text=True, timeout=timeout
    )


@dataclass
class Run:
    """A script run to the end by `spool run`."""

    exit_code: int
    stdout: str
    stderr: str
    run_id: str
    journal: list[dict[str, Any]] | None = None

    def results(self, verb: str, name: str) -> list[dict[str, Any]]:
        assert self.journal is not None
        return [r for r in self.journal if r["kind"] == "result" and r["verb"] == verb and r["name"] == name]

    def calls(self, verb: str, name: str) -> list[dict[str, Any]]:
        assert self.journal is not None
        return [r for r in self.journal if r["kind"] == "call" and r["verb"] == verb and r["name"] == name]


def spool_run(text: str, workdir: Path, data_dir: Path) -> Run:
    workdir.mkdir(parents=True, exist_ok=True)
    file = workdir / "flow.py"
    file.write_text(text)
    done = spool("run", str(file), "--data-dir", str(data_dir), cwd=workdir)
    match = re.search(r"run: (\S+)", done.stdout + done.stderr)
    assert match, f"no run id in the output of spool run:\n{done.stdout}\n{done.stderr}"
    return Run(done.returncode, done.stdout, done.stderr, match.group(1))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class DevServer:
    """`spool dev` on a data directory, in the background, for as long as the tests need it."""

    def __init__(self, data_dir: Path, log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = log.open("w")
        self.process = subprocess.Popen(
            ["node", str(SPOOL), "dev", "--port", str(self.port), "--data-dir", str(data_dir)],
            cwd=data_dir.parent,
            env=script_env(),
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=2):
                    break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise AssertionError(f"spool dev did not start:\n{log.read_text()}") from None
                time.sleep(0.3)

    def spool(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return spool(*args, cwd=cwd, env=script_env(SPOOL_SERVER=self.url))

    def json(self, *args: str) -> Any:
        done = self.spool(*args, "--json")
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log.close()
