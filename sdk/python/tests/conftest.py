from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

# The tests run against the source tree, installed or not, and import their helpers by name.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine import DevServer, Run, require_engine, spool_run  # noqa: E402
from scenarios import ALL  # noqa: E402


@dataclass
class Engine:
    runs: dict[str, Run]
    dev: DevServer
    scratch: Path


@pytest.fixture(scope="session")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """The scenarios run to the end with `spool run`, then `spool dev` on the same store, so the
    journals can be read and the preview example submitted (one embedded store: it is slow to make)."""
    require_engine()
    scratch = tmp_path_factory.mktemp("engine")
    data = scratch / "data"
    runs = {name: spool_run(text, scratch / name, data) for name, text in ALL.items()}
    dev = DevServer(data, scratch / "dev.log")
    try:
        for run in runs.values():
            run.journal = dev.json("journal", run.run_id)
        yield Engine(runs, dev, scratch)
    finally:
        dev.stop()
