"""hyperspool.testing against the real `spool test`: a workflow written with this SDK
(workflows/trial.py sleeps 14 days and waits a week for a signal) run on the virtual clock."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from engine import SPOOL, require_engine
from hyperspool.testing import Case, SpoolTestError, run_case, run_cases

TRIAL = Path(__file__).resolve().parent / "workflows" / "trial.py"
CLI = str(SPOOL)

UPGRADE: Case = {
    "name": "upgrades in the third week",
    "signals": [{"at": timedelta(days=15), "name": "upgrade", "payload": "pro"}],
    "stubs": {"steps": {"charge": {"stdout": "rcpt-1\n"}}},
    "expect": {"outputs": {"plan": "pro", "receipt": "rcpt-1"}, "steps": ["charge"], "time": "15d"},
}


@pytest.fixture(autouse=True)
def engine_built() -> None:
    require_engine()


def test_the_workflows_own_test_file_passes() -> None:
    results = run_cases(TRIAL, cli=CLI)
    for result in results:
        result.assert_passed()
    assert [r.case for r in results] == ["upgrades in the third week", "stays free when no upgrade comes"]
    assert results[1].virtual_time == timedelta(days=21)
    assert results[1].outputs == {"receipt": "rcpt-2", "plan": "free"}


def test_a_case_built_here_passes_and_with_one_expectation_changed_fails_saying_which() -> None:
    wrong: Case = {**UPGRADE, "name": "expects enterprise", "expect": {**UPGRADE["expect"], "outputs": {"plan": "enterprise"}}}
    passing, failing = run_cases(TRIAL, [UPGRADE, wrong], cli=CLI)
    passing.assert_passed()
    assert passing.outcome == "succeeded" and passing.virtual_ms == 15 * 86_400_000
    assert [(e.verb, e.name) for e in passing.journal if e.kind == "call"] == [
        ("step", "charge"),
        ("sleep", ""),
        ("wait.signal", "upgrade"),
        ("output.set", "receipt"),
        ("output.set", "plan"),
    ]
    assert not failing.passed
    assert failing.failures == ['expected output plan to be "enterprise", but it was "pro"']
    with pytest.raises(AssertionError) as raised:
        failing.assert_passed()
    report = str(raised.value)
    assert 'expected output plan to be "enterprise", but it was "pro"' in report
    assert "wait.signal" in report and "upgrade" in report  # the journal is in it


def test_a_bad_case_raises_the_clis_one_line() -> None:
    with pytest.raises(SpoolTestError) as raised:
        run_case(TRIAL, {"expect": {"outcom": "succeeded"}}, cli=CLI)
    assert str(raised.value) == (
        "spool: --case: case 'case 1': expect: unknown key 'outcom' "
        "(known: outcome, error, outputs, steps, state, time, runs, log)"
    )


def test_without_a_cli_it_says_where_it_looked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPOOL_CLI", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(SpoolTestError, match="set SPOOL_CLI"):
        run_case(TRIAL, UPGRADE)


def test_text_beyond_ascii_comes_back_whatever_the_locale() -> None:
    # The CLI prints UTF-8; under a C locale without Python's UTF-8 mode, text=True would read
    # it as ASCII and fail on the payload. (The case goes out as ASCII: json.dumps escapes it.)
    code = f"""
from hyperspool.testing import run_case
result = run_case({str(TRIAL)!r}, {{
    "signals": [{{"at": "15d", "name": "upgrade", "payload": "pro \\u2713 \\U0001f680"}}],
    "stubs": {{"steps": {{"charge": {{"stdout": "r\\u00e9\\n"}}}}}},
    "expect": {{"outputs": {{"plan": "pro \\u2713 \\U0001f680", "receipt": "r\\u00e9"}}}},
}}, cli={CLI!r})
result.assert_passed()
print(ascii(result.outputs["plan"]))
"""
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONPATH": str(TRIAL.parents[2] / "src")}
    done = subprocess.run([sys.executable, "-X", "utf8=0", "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "'pro \\u2713 \\U0001f680'"


# Pass 1 records its working directory; pass 2, after the sleep, says whether it runs in the same one.
WHERE = """first=$(spool step where -- pwd)
spool sleep 1d
spool output set dir "$([ "$first" = "$(pwd)" ] && echo same || echo new)"
"""


def test_fresh_dir_runs_each_pass_in_a_new_directory(tmp_path: Path) -> None:
    workflow = tmp_path / "where.sh"
    workflow.write_text(WHERE)
    result = run_case(workflow, {"expect": {"outputs": {"dir": "new"}}}, cli=CLI, fresh_dir=True)
    result.assert_passed()
