"""Test a workflow from pytest (or any test runner) through ``spool test``: its cases run on an
in-memory store with a virtual clock, so a 14-day sleep takes no real time
(docs/testing-workflows.md, docs/sdks.md).

    from hyperspool.testing import run_case

    def test_upgrade() -> None:
        run_case("trial.py", {
            "signals": [{"at": "15d", "name": "upgrade", "payload": "pro"}],
            "stubs": {"steps": {"charge": {"stdout": "rcpt-1"}}},
            "expect": {"outputs": {"plan": "pro"}, "time": "15d"},
        }).assert_passed()

A case is the map a ``NAME.test.yaml`` holds (``spool test`` checks its keys); a duration is the
CLI's text (``"15d"``, ``"1h30m"``) or a ``timedelta``. The CLI is ``cli``, else ``$SPOOL_CLI``,
else ``spool`` on the PATH.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Dict, List, Optional, Sequence, TypedDict, Union

Duration = Union[str, timedelta]


class Signal(TypedDict, total=False):
    at: Duration
    name: str
    payload: Any


class Event(TypedDict, total=False):
    at: Duration
    type: str
    key: str
    payload: Any


class Approval(TypedDict, total=False):
    at: Duration
    job: str
    answer: str
    by: str
    values: Any


class Schedule(TypedDict):
    every: Duration
    ticks: int


class Stubs(TypedDict, total=False):
    steps: Dict[str, Dict[str, Any]]
    http: Dict[str, Dict[str, Any]]


class Expect(TypedDict, total=False):
    outcome: str
    error: str
    outputs: Dict[str, Any]
    steps: List[str]
    state: Dict[str, Any]
    time: Duration
    runs: int
    log: str


class Case(TypedDict, total=False):
    name: str
    input: Any
    on: str
    schedule: Schedule
    signals: List[Signal]
    events: List[Event]
    approvals: List[Approval]
    stubs: Stubs
    expect: Expect


class SpoolTestError(Exception):
    """``spool test`` refused the case or the workflow (its one line), or could not be run."""


@dataclass(frozen=True)
class JournalEntry:
    position: int
    kind: str
    verb: str
    name: str
    data: Any


@dataclass(frozen=True)
class CaseResult:
    """One case's verdict, from ``spool test --json``. ``failures`` holds one line per unmet
    expectation; the run's fields are None (or empty) when the case could not run at all."""

    workflow: str
    test_file: Optional[str]
    case: str
    passed: bool
    failures: List[str]
    real_ms: int
    run_id: Optional[str]
    outcome: Optional[str]
    error: Optional[str]
    awaiting: Optional[str]
    outputs: Dict[str, str]
    steps: List[str]
    state: Dict[str, Optional[str]]
    runs: int
    virtual_ms: Optional[int]
    journal: List[JournalEntry]
    log: str

    @property
    def virtual_time(self) -> Optional[timedelta]:
        """The virtual time from the start until the last run ended."""
        return None if self.virtual_ms is None else timedelta(milliseconds=self.virtual_ms)

    def report(self) -> str:
        """What a person reads: the verdict, each failure, how the run ended, its journal and log."""
        lines = [f"{'PASS' if self.passed else 'FAIL'} {self.workflow} › {self.case}"]
        lines += [f"  {failure}" for failure in self.failures]
        if self.run_id is not None:
            waiting = f" for {self.awaiting}" if self.outcome == "waiting" else ""
            lines.append(f"  the run {self.run_id} {self.outcome}{waiting}{f': {self.error}' if self.error else ''}")
            lines.append("  its journal:")
            for entry in self.journal:
                data = json.dumps(entry.data, ensure_ascii=False)
                lines.append(f"    {entry.position + 1:>3} {entry.kind:<6} {entry.verb:<12} {entry.name} {data}")
            if self.log.strip():
                lines.append("  its log:")
                lines += [f"    {line}" for line in self.log.rstrip().splitlines()[-40:]]
        return "\n".join(lines)

    def assert_passed(self) -> None:
        """Raises AssertionError with the report when the case failed."""
        if not self.passed:
            raise AssertionError(self.report())


def run_case(
    workflow: Union[str, os.PathLike[str]], case: Case, *, cli: Optional[str] = None, fresh_dir: bool = False
) -> CaseResult:
    """Runs one case built here against the workflow file. With ``fresh_dir``, each pass runs in a
    new, empty working directory, as each pass on a cluster is a new pod."""
    return _spool_test(workflow, json.dumps(case, default=_duration_text), cli, fresh_dir)[0]


def run_cases(
    workflow: Union[str, os.PathLike[str]],
    cases: Optional[Sequence[Case]] = None,
    *,
    cli: Optional[str] = None,
    fresh_dir: bool = False,
) -> List[CaseResult]:
    """Runs these cases, or without any the workflow's own test file (``trial.py`` →
    ``trial.test.yaml``; none there: one case that passes when the run succeeds)."""
    given = None if cases is None else json.dumps(list(cases), default=_duration_text)
    return _spool_test(workflow, given, cli, fresh_dir)


def _duration_text(value: object) -> str:
    # A timedelta is sent as whole milliseconds, a form the CLI reads ("1296000000ms").
    if isinstance(value, timedelta):
        return f"{round(value / timedelta(milliseconds=1))}ms"
    raise TypeError(f"a test case holds only JSON values and timedeltas, not {type(value).__name__}")


def _spool_test(
    workflow: Union[str, os.PathLike[str]], cases: Optional[str], cli: Optional[str], fresh_dir: bool
) -> List[CaseResult]:
    spool = cli or os.environ.get("SPOOL_CLI") or shutil.which("spool")
    if not spool:
        raise SpoolTestError("no spool CLI: set SPOOL_CLI to its path or put spool on the PATH")
    argv = [spool, "test", os.fspath(workflow), "--json"] + ([] if cases is None else ["--case", cases])
    argv += ["--fresh-dir"] if fresh_dir else []
    try:
        done = subprocess.run(argv, capture_output=True, encoding="utf-8")
    except OSError as error:
        raise SpoolTestError(f"{spool}: {error}") from None
    if done.returncode not in (0, 1):
        # Exit 2 is bad input, one line on stderr; anything else is the CLI failing.
        said = done.stderr.strip() or f"spool test exited {done.returncode} and said nothing"
        raise SpoolTestError(said if done.returncode == 2 else f"spool test exited {done.returncode}: {said}")
    try:
        return [_result(each) for each in json.loads(done.stdout)]
    except (ValueError, KeyError, TypeError) as error:
        raise SpoolTestError(f"spool test --json printed what is not its report ({error}): {done.stdout[:200]!r}") from None


def _result(raw: Dict[str, Any]) -> CaseResult:
    return CaseResult(
        workflow=raw["workflow"],
        test_file=raw["testFile"],
        case=raw["case"],
        passed=raw["passed"],
        failures=list(raw["failures"]),
        real_ms=raw["realMs"],
        run_id=raw.get("runId"),
        outcome=raw.get("outcome"),
        error=raw.get("error"),
        awaiting=raw.get("awaiting"),
        outputs=raw.get("outputs") or {},
        steps=raw.get("steps") or [],
        state=raw.get("state") or {},
        runs=raw.get("runs", 0),
        virtual_ms=raw.get("virtualMs"),
        journal=[JournalEntry(e["position"], e["kind"], e["verb"], e["name"], e["data"]) for e in raw.get("journal") or []],
        log=raw.get("log") or "",
    )
