"""What importing the SDK costs a script: every pass starts the script again, so a script of steps
and waits must not load what only artifacts, activities or `step` (a command) need (issue 32)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

# Each was loaded by `import hyperspool` before it was made lazy.
LAZY = [
    "hyperspool.artifacts",
    "hyperspool.activities",
    "hyperspool.testing",
    "tarfile",
    "hashlib",
    "base64",
    "subprocess",
    "dataclasses",
    "inspect",
    "datetime",
]


def _loaded(code: str) -> set[str]:
    """The LAZY modules in sys.modules after `code`, in a fresh interpreter without site (a .pth of
    the environment may import anything)."""
    probe = f"{code}\nimport sys, json\nprint(json.dumps([m for m in {LAZY!r} if m in sys.modules]))"
    env = dict(os.environ, PYTHONPATH=str(SRC))
    done = subprocess.run([sys.executable, "-S", "-c", probe], env=env, capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout))


def test_a_script_of_steps_and_waits_loads_none_of_the_lazy_modules() -> None:
    bare = _loaded("pass")
    used = _loaded("import hyperspool\nfrom hyperspool import script\nscript.step_fn, script.sleep, script.state_get, script.lock")
    assert used - bare == set()


def test_a_lazy_name_loads_on_first_use_and_is_the_real_function() -> None:
    loaded = _loaded(
        "from hyperspool import script\n"
        "from hyperspool.script import checkout\n"
        "import hyperspool.artifacts as artifacts\n"
        "assert checkout is artifacts.checkout and script.activity_wait_all.__module__ == 'hyperspool.activities'\n"
        "assert 'artifact_put' in dir(script)"
    )
    assert {"hyperspool.artifacts", "hyperspool.activities"} <= loaded


def test_a_name_the_script_module_lacks_is_an_attribute_error() -> None:
    _loaded(
        "from hyperspool import script\n"
        "try:\n    script.no_such_verb\nexcept AttributeError as e:\n    assert 'no_such_verb' in str(e)\nelse:\n    raise SystemExit(1)"
    )


def test_a_step_result_is_immutable_and_compared_by_value() -> None:
    _loaded(
        "from hyperspool.script import StepResult\n"
        "r = StepResult('out', 3)\n"
        "assert r == StepResult('out', 3) and r != StepResult('out', 4) and len({r, StepResult('out', 3)}) == 1\n"
        "assert repr(r) == \"StepResult(stdout='out', exit_code=3)\"\n"
        "try:\n    r.stdout = 'x'\nexcept AttributeError:\n    pass\nelse:\n    raise SystemExit(1)"
    )
