import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BLOCK, END, fileHeader, padding } from '../../src/common/bundle/ustar.js';
import { startDevServer, type DevServer } from '../../src/dev/dev-server.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { propertyRuns } from '../support/property.js';
import { removeTempDirs } from '../support/spool.js';

/**
 * Checkout bundles at their boundary, `POST /v1/checkouts` (issue 28): random and mutated tar
 * archives (absolute paths, `..`, links, devices, a header's checksum or size broken, cut short,
 * over the limit, any bytes). A bundle `spool submit --with` could have written is taken (201); one
 * it could not is refused with a 4xx and a code, stores nothing (no artifact row, no part), and the
 * server takes a good bundle right after. Over real PostgreSQL, so the rows can be counted.
 */

/** Properties that fail only because of a bug another change is fixing: printed, not yet checked. */
const OPEN_BUGS: Record<string, string> = {};

const LIMIT = 64 * 1024;
/** storeCheckout allows the limit plus 1 MiB for the archive's headers and padding. */
const OVER = LIMIT + 1024 * 1024 + BLOCK;

let postgres: TestPostgres;
let dev: DevServer;
let db: pg.Client;
const limitBefore = process.env.SPOOL_MAX_CHECKOUT_BYTES;

beforeAll(async () => {
  process.env.SPOOL_MAX_CHECKOUT_BYTES = String(LIMIT);
  postgres = await startPostgres();
  dev = await startDevServer({ port: 0, databaseUrl: postgres.url, pollMs: 50 });
  db = new pg.Client({ connectionString: postgres.url });
  await db.connect();
}, 120_000);

afterAll(async () => {
  if (limitBefore === undefined) delete process.env.SPOOL_MAX_CHECKOUT_BYTES;
  else process.env.SPOOL_MAX_CHECKOUT_BYTES = limitBefore;
  await db?.end();
  await dev?.close();
  await postgres?.stop();
  removeTempDirs();
});

interface File {
  path: string;
  data: Buffer;
  executable: boolean;
}

const archive = (files: File[]): Buffer => Buffer.concat([...files.flatMap(({ path, data, executable }) => [fileHeader(path, data.length, executable), data, padding(data.length)]), END]);

/** Recomputes a header's checksum after a change, so only the change is wrong. */
function resum(header: Buffer): Buffer {
  header.write('        ', 148, 'ascii');
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return header;
}

/** A header of another type (`2` symlink, `1` hard link, `3`/`4` devices, `6` FIFO...) pointing at `link`. */
function entryOfType(path: string, type: string, link: string): Buffer {
  const header = fileHeader(path, 0, false);
  header.write(type, 156, 'ascii');
  header.write(link, 157, 100, 'utf8');
  return resum(header);
}

const segment = fc.stringMatching(/^[a-z0-9_.-]{1,12}$/).filter((name) => name !== '.' && name !== '..');
const file = fc.record({
  path: fc.array(segment, { minLength: 1, maxLength: 3 }).map((parts) => parts.join('/')),
  data: fc.uint8Array({ maxLength: 1500 }).map((bytes) => Buffer.from(bytes)),
  executable: fc.boolean(),
});
const files = fc.uniqueArray(file, { minLength: 1, maxLength: 4, selector: (one) => one.path }).filter((list) => list.every((one) => list.every((other) => !other.path.startsWith(`${one.path}/`))));

type Expect = 'taken' | 'refused' | 'too_large';
interface Case {
  what: string;
  body: Buffer;
  expect: Expect;
}

/** What a bundle may be: one spool writes, or one with a single thing wrong. */
const bundle: fc.Arbitrary<Case> = fc.oneof(
  { weight: 4, arbitrary: files.map((list): Case => ({ what: 'a bundle spool writes', body: archive(list), expect: 'taken' })) },
  fc.tuple(files, fc.constantFrom('/etc/passwd', '/x', '../x', 'a/../../x', '..', 'a/..', './../x'), fc.nat()).map(([list, path, at]): Case => {
    const bad = [...list];
    bad.splice(at % (bad.length + 1), 0, { path, data: Buffer.from('x'), executable: false });
    return { what: `a file at ${path}`, body: archive(bad), expect: 'refused' };
  }),
  fc.tuple(files, fc.constantFrom('1', '2', '3', '4', '6', '7', 'x', 'g', 'L', 'K', 'Z'), fc.constantFrom('/etc/passwd', '../x', 'a', '')).map(([list, type, link]): Case => ({
    what: `an entry of type ${type} to ${link}`,
    body: Buffer.concat([entryOfType('link', type, link), archive(list)]),
    expect: 'refused',
  })),
  fc.tuple(files, fc.nat(), fc.integer({ min: 1, max: 255 })).map(([list, at, xor]): Case => {
    const body = archive(list);
    body[(at % 148) + 0] = (body[at % 148] ?? 0) ^ xor; // a byte of the first header's name, mode, ids or size: its checksum no longer holds
    return { what: 'a header whose checksum does not hold', body, expect: 'refused' };
  }),
  fc.tuple(files, fc.constantFrom('9999999999\0', 'zzzzzzzzzzz\0', '-1\0', '77777777777\0')).map(([list, size]): Case => {
    const body = archive(list);
    resum(body.subarray(0, BLOCK)).write(size, 124, 'ascii');
    resum(body.subarray(0, BLOCK));
    return { what: `a size of ${JSON.stringify(size)}`, body, expect: 'refused' };
  }),
  fc.tuple(files, fc.nat()).map(([list, at]): Case => {
    const whole = archive(list);
    // Cut anywhere before the end blocks: a header or a file's bytes are missing.
    return { what: 'an archive cut short', body: whole.subarray(0, at % (whole.length - END.length)), expect: 'refused' };
  }),
  fc.uint8Array({ minLength: 1, maxLength: 3000 }).map((bytes): Case => ({ what: 'any bytes', body: Buffer.from(bytes), expect: 'refused' })),
);

/** The artifact rows and stored parts, counted: a refused bundle leaves both as they were. */
async function stored(): Promise<string> {
  const { rows } = await db.query<{ artifacts: string; parts: string }>('select (select count(*) from artifacts) as artifacts, (select count(*) from artifact_parts) as parts');
  return JSON.stringify(rows[0]);
}

const upload = async (body: Buffer, type = 'application/x-tar'): Promise<{ status: number; text: string }> => {
  const response = await fetch(`${dev.url}/v1/checkouts`, { method: 'POST', headers: { 'content-type': type }, body: new Uint8Array(body) });
  return { status: response.status, text: await response.text() };
};

const GOOD = archive([{ path: 'flow.sh', data: Buffer.from('echo hi\n'), executable: true }]);

/** Uploads one bundle and checks the answer, what is stored, and that the server takes a good bundle next. */
async function expectAnswer({ what, body, expect: expected }: Case): Promise<void> {
  const before = await stored();
  const { status, text } = await upload(body);
  const said = `${what} (${body.length} bytes: ${body.subarray(0, 32).toString('hex')}…) → ${status} ${text}`;
  expect(status, said).toBeLessThan(500);
  if (expected === 'taken') expect(status, said).toBe(201);
  else if (expected === 'refused' && OPEN_BUGS.refused) skipped.push(said.slice(0, 200));
  else {
    expect(status, said).toBeGreaterThanOrEqual(400);
    const code = (JSON.parse(text) as { error?: { code?: unknown } }).error?.code;
    if (expected === 'too_large') expect([status, code], said).toEqual([413, 'too_large']);
    else expect(code, said).toEqual(expect.any(String));
    expect(await stored(), said).toBe(before);
  }
  expect((await upload(GOOD)).status, `after ${said}`).toBe(201);
}

const skipped: string[] = [];

describe('checkout bundles, fuzzed', () => {
  it('are taken when spool could have written them; otherwise refused with a 4xx and a code, storing nothing, and the server takes the next one', async () => {
    await fc.assert(fc.asyncProperty(bundle, expectAnswer), propertyRuns('checkout bundles', 200));
    if (skipped.length)
      process.stdout.write(`checkout bundles: not yet checked, ${OPEN_BUGS.refused}:\n  ${skipped.slice(0, 5).join('\n  ')}\n  (${skipped.length} in all)\n`);
  }, 180_000);

  it('refuse a bundle over SPOOL_MAX_CHECKOUT_BYTES with 413 too_large, storing nothing, and one sent as another type with 400', async () => {
    const big = archive([{ path: 'big.bin', data: Buffer.alloc(OVER, 7), executable: false }]);
    await expectAnswer({ what: 'a bundle over the limit', body: big, expect: 'too_large' });
    // Not an archive at all: refused at its first header, whatever its size (issue 28, bug 11).
    await expectAnswer({ what: 'bytes over the limit', body: Buffer.alloc(OVER, 0x41), expect: 'refused' });
    const before = await stored();
    const typed = await upload(GOOD, 'application/octet-stream');
    expect(typed.status).toBe(400);
    expect(await stored()).toBe(before);
  }, 60_000);
});
