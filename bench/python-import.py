#!/usr/bin/env python3
# `python3 bench/python-import.py sdk/python/src [N]` (docs/benchmarks.md#python-sdk-import).
# Median CPU time (user+sys) of `python3 -c CODE` over N runs: a bare interpreter, `import hyperspool`,
# and the step/sleep names a script of steps uses. CPU, not wall time: the machine is shared.
import os, resource, statistics, subprocess, sys
src = sys.argv[1]; n = int(sys.argv[2]) if len(sys.argv) > 2 else 40
env = dict(os.environ, PYTHONPATH=src)
def cpu(code):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
def median(code):
    cpu(code)  # warm the bytecode cache
    return statistics.median(cpu(code) for _ in range(n))
bare = median("pass"); imp = median("import hyperspool"); steps = median("from hyperspool import script; script.step_fn, script.sleep")
print(f"bare {bare:.1f} ms  import hyperspool {imp:.1f} ms (+{imp-bare:.1f})  script.step_fn+sleep {steps:.1f} ms (+{steps-bare:.1f})")

# The import alone, as `python3 -S -X importtime` reports it (no site: a .pth of the environment may
# import typing, re or pathlib first and hide their cost), median over N runs.
def importtime(code):
    out = subprocess.run([sys.executable, "-S", "-X", "importtime", "-c", code], env=env, capture_output=True, text=True, check=True).stderr
    return sum(int(line.split("|")[1]) for line in out.splitlines() if line.startswith("import time:") and line.rstrip().endswith("| hyperspool")) / 1000
for code in ["import hyperspool"]:
    print(f"{code} (python3 -S -X importtime): {statistics.median(importtime(code) for _ in range(n)):.1f} ms")
