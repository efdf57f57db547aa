import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finalLog, freePort, getRun, startDevProcess, submit, type DevProcess } from '../support/dev.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { removeTempDirs, tempDir, writeFiles } from '../support/spool.js';

/**
 * A 200 MiB artifact streams through the client, the agent and the server without any of them
 * holding it: measured as peak resident memory (VmHWM) of the in-script client while it puts and
 * gets, and of a `spool dev` process (server, engine and agent in one) on PostgreSQL. The numbers
 * are printed and kept in docs/benchmarks.md; the test asserts only that each peak stays well
 * under the artifact's size. It runs once (not per client) and is the suite's only 200 MiB test.
 */
const MIB = 1024 * 1024;
const SIZE_MIB = 200;

let postgres: TestPostgres | undefined;
let dev: DevProcess | undefined;

beforeAll(async () => {
  // The native client, which scripts get by default; the Node client (the fallback, a V8 heap that
  // collects its 700 KB part strings lazily) peaks near 160 MiB here (docs/benchmarks.md).
  process.env.SPOOL_CLIENT = 'native';
  postgres = await startPostgres();
  dev = await startDevProcess(`${tempDir('spool-dev-data-')}/data`, await freePort(), 60_000, ['--database-url', postgres.url]);
}, 120_000);

afterAll(async () => {
  dev?.child.kill('SIGTERM');
  await dev?.exited;
  await postgres?.stop();
  removeTempDirs();
});

/** A process's peak and current resident memory, in KiB, from /proc. */
function memoryOf(pid: number): { peak: number; now: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { peak: field('VmHWM'), now: field('VmRSS') };
}

describe('memory while a 200 MiB artifact streams', () => {
  it('given spool dev on PostgreSQL, when a script puts and gets a 200 MiB artifact, then the client, and the server with its agent, each peak far below 200 MiB', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'big.sh': `set -euo pipefail
head -c ${SIZE_MIB * MIB} /dev/urandom > big.bin
want=$(sha256sum big.bin | cut -d' ' -f1)
# The client's peak resident memory (VmHWM) while it runs, read from /proc until it exits.
peak() {
  local pid=$1 top=0 kib
  while kill -0 "$pid" 2>/dev/null; do
    kib=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    if [ -n "$kib" ] && [ "$kib" -gt "$top" ]; then top=$kib; fi
    sleep 0.02
  done
  echo "$top"
}
spool artifact put big.bin big.bin & pid=$!
put=$(peak $pid); wait $pid
rm big.bin
spool artifact get big.bin got.bin & pid=$!
get=$(peak $pid); wait $pid
got=$(sha256sum got.bin | cut -d' ' -f1)
rm got.bin
echo "client peak KiB: put $put get $get"
[ "$got" = "$want" ] && echo "sha256 matches: $got"
`,
    });
    const before = memoryOf(dev!.pid);

    const id = await submit(dev!.url, dir, 'big.sh');
    const log = await finalLog(dev!.url, id, 600_000);
    const after = memoryOf(dev!.pid);

    expect(log).toMatch(/sha256 matches: [0-9a-f]{64}/);
    expect((await getRun(dev!.url, id)).status).toBe('succeeded');
    const [put = Number.NaN, get = Number.NaN] = (/client peak KiB: put (\d+) get (\d+)/.exec(log) ?? []).slice(1).map(Number);
    const report =
      `200 MiB artifact, spool dev on PostgreSQL (native client): ` +
      `client peak ${Math.round(put / 1024)} MiB putting, ${Math.round(get / 1024)} MiB getting; ` +
      `spool dev (server, engine, agent) peak ${Math.round(after.peak / 1024)} MiB ` +
      `(${Math.round(before.peak / 1024)} MiB before the run, ${Math.round(after.now / 1024)} MiB after)`;
    console.log(report);
    // Bounded: a client or server holding the artifact would peak above its 200 MiB.
    expect(put).toBeGreaterThan(0);
    expect(put).toBeLessThan(100 * 1024);
    expect(get).toBeLessThan(100 * 1024);
    // The server's peak is V8's slack of earlier parts until its next major collection, which falls
    // behind on a loaded machine: +68 MiB on a quiet one, +100 MiB once beside a whole CI run. Holding
    // the artifact would take its 200 MiB, and more as base64.
    expect(after.peak - before.peak).toBeLessThan(150 * 1024);
  }, 900_000);
});
