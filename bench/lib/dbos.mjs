/** DBOS Transact (PyPI `dbos`) for the side-by-side benches: a virtualenv made once per bench run. */
import { join } from 'node:path';
import { runCommand } from './proc.mjs';

/**
 * A Python that imports `dbos`: BENCH_DBOS_PYTHON if set, else a new virtualenv in `scratch` with
 * `dbos` pip-installed. Answers { python, version } ("3.4.0 3.11.7": dbos, then Python) or throws.
 */
export async function dbosPython(scratch, log) {
  let python = process.env.BENCH_DBOS_PYTHON;
  if (!python) {
    const venv = join(scratch, 'venv');
    log('DBOS: python3 -m venv + pip install dbos (scratch virtualenv)');
    await runCommand('python3', ['-m', 'venv', venv], { timeoutMs: 120_000, cwd: scratch });
    python = join(venv, 'bin', 'python');
    await runCommand(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', 'dbos'], {
      timeoutMs: 300_000,
      cwd: scratch,
    });
  }
  const version = await runCommand(
    python,
    ['-c', 'import importlib.metadata as m, sys; print(m.version("dbos"), sys.version.split()[0])'],
    { timeoutMs: 60_000, cwd: scratch },
  );
  return { python, version: version.trim() };
}
