import { spawn } from 'node:child_process';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE_CLI } from '../../src/agent/script-client.js';
import type { DevServer } from '../../src/dev/dev-server.js';
import type { SqlClient } from '../../src/store/sql.js';
import { startDev, submit, waitForRun } from '../support/dev.js';
import { propertyRuns } from '../support/property.js';
import { removeTempDirs, tempDir, writeFiles } from '../support/spool.js';

/**
 * The control verbs' arguments at their boundary (issue 28): the argv of valid `spool submit`,
 * `status`, `signal`, `event emit`, `handler set`, `schedule create`... mutated (an argument dropped,
 * doubled or replaced; unknown flags, bad durations, malformed JSON, huge values, bytes that are
 * not UTF-8), run against a real `spool dev`. A command that fails exits 1 or 2 with one line on
 * stderr, never a stack, and records nothing on the server; the server answers throughout.
 */

let dev: DevServer;
let dir: string;
let waiting: string;

beforeAll(async () => {
  dev = await startDev();
  dir = tempDir();
  writeFiles(dir, { 'flow.sh': 'true\n', 'wait.sh': 'spool wait signal never\n', 'p.yaml': 'name: p\njobs:\n  a:\n    script: "true"\n' });
  waiting = await submit(dev.url, dir, 'wait.sh');
  await waitForRun(dev.url, waiting, ['waiting']);
}, 60_000);

afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});

/** The tables a command may write to, and that nothing else writes to meanwhile. */
const WRITTEN = ['runs', 'signals', 'events', 'cells', 'handlers', 'schedules', 'throttles', 'artifacts'];
async function recorded(): Promise<Record<string, unknown>> {
  const db = (dev.store as unknown as { db: SqlClient }).db;
  const [counts] = await db.query(`select ${WRITTEN.map((table) => `(select count(*) from ${table})::int as ${table}`).join(', ')}`);
  return counts ?? {};
}

const RUN = '<run>';
const VALID: string[][] = [
  ['submit', 'flow.sh', '--input', '{"a":1}'],
  ['submit', 'p.yaml', '--idempotency-key', 'k', '--throttle', '5/1m', '--throttle-key', 't'],
  ['submit', 'flow.sh', '--with', '.'],
  ['runs', '--status', 'waiting', '--json'],
  ['runs', '--search', 'flow', '--since', '1h', '--until', '2099-01-01', '--sort', '-duration', '-o', 'name'],
  ['status', RUN, '--json'],
  ['journal', RUN],
  ['logs', RUN, '--passes'],
  ['signal', RUN, 'go', '{"a":1}'],
  ['event', 'emit', 'fuzz.event', '--key', 's', '--payload', '{"a":1}'],
  ['handler', 'set', 'h', 'flow.sh', '--on', 'fuzz.never'],
  ['handler', 'list'],
  ['schedule', 'create', 'flow.sh', '--name', 'n', '--every', '30d'],
  ['schedule', 'create', 'flow.sh', '--name', 'c', '--cron', '0 0 1 1 *'],
  ['schedule', 'list', '--json'],
  ['schedule', 'suspend', 'n'],
  ['schedule', 'resume', 'n'],
];

const token = fc.oneof(
  fc.constantFrom('--lable', '--every', '--cron', '--input', '--payload', '--status', '--on', '--name', '--throttle', '-x', '--=', '5 minutes', '5x', '-1s', '999999999999d', '0/1m', '1/0s', '* * *', '61 * * * *', '{bad', '{"a":', 'null', '', ' ', 'a\nb', 'nowhere.sh', '/etc', 'dev:default:run-0000000000000000', RUN),
  fc.constantFrom('x'.repeat(20_000), `{"a":"${'y'.repeat(20_000)}"}`),
  fc.string({ maxLength: 12 }),
  fc.uint8Array({ minLength: 1, maxLength: 8 }).map((bytes) => Buffer.from(bytes.map((byte) => (byte === 0 ? 0xff : byte)))),
);
type Arg = string | Buffer;

const argv = fc
  .tuple(fc.constantFrom(...VALID), fc.array(fc.tuple(fc.constantFrom('drop', 'double', 'replace', 'insert'), fc.nat(), token), { minLength: 1, maxLength: 2 }))
  .map(([valid, changes]) => {
    const args: Arg[] = [...valid];
    for (const [how, pick, value] of changes) {
      // The verb stays: a command that serves (dev, ui) or follows (--follow, --watch) would not end.
      const at = 1 + (pick % args.length);
      if (how === 'drop' && args.length > 1) args.splice(Math.min(at, args.length - 1), 1);
      else if (how === 'double' && at < args.length) args.splice(at, 0, args[at] ?? '');
      else if (how === 'replace' && at < args.length) args[at] = value;
      else args.splice(at, 0, value);
    }
    return args;
  });

/** Counterexamples seeds found, tried first on every run. */
const FOUND: [Arg[]][] = [
  // A group without its command printed the whole help, 12 lines (seed 637520600).
  [['handler']],
  [['schedule', 'frob\nx']],
];

const shown = (args: Arg[]): string => args.map((arg) => (typeof arg === 'string' ? JSON.stringify(arg.length > 60 ? `${arg.slice(0, 60)}…` : arg) : `<bytes ${arg.toString('hex')}>`)).join(' ');
/** `$'…'`: bash's quoting that writes any byte, so argv can carry bytes that are not UTF-8. */
const quoted = (arg: Arg): string =>
  `$'${[...Buffer.from(arg)].map((byte) => (/[\w.,:/{}"=+-]/.test(String.fromCharCode(byte)) && byte < 0x80 ? String.fromCharCode(byte) : `\\x${byte.toString(16).padStart(2, '0')}`)).join('')}'`;

function control(args: Arg[]): Promise<{ code: number | null; stderr: string }> {
  const argv = args.map((arg) => (arg === RUN ? waiting : arg));
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', `exec ${[NODE_CLI, ...argv].map(quoted).join(' ')}`], {
      cwd: dir,
      // No kubeconfig to find: a flag that picks a cluster is refused rather than reaching one.
      env: { PATH: process.env.PATH, HOME: dir, KUBECONFIG: join(dir, 'no-kubeconfig'), SPOOL_SERVER: dev.url },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

describe("the control verbs' arguments, fuzzed", () => {
  it('a command that fails exits 1 or 2 with one line on stderr and records nothing; the server answers throughout', async () => {
    await fc.assert(
      fc.asyncProperty(argv, async (args) => {
        const before = await recorded();
        const { code, stderr } = await control(args);
        const said = `spool ${shown(args)} → exit ${code} ${JSON.stringify(stderr.slice(0, 2000))}`;
        expect(code, said).not.toBeNull();
        if (code === 0) return;
        expect([1, 2], said).toContain(code);
        expect(stderr, said).toMatch(/^[^\n]+\n$/);
        expect(await recorded(), said).toEqual(before);
        expect((await fetch(`${dev.url}/v1/runs?limit=1`)).status, `after ${said}`).toBe(200);
      }),
      propertyRuns('control arguments', 60, FOUND),
    );
  }, 300_000);
});
