import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  accessSync,
  appendFileSync,
  chownSync,
  constants,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

/** A throwaway PostgreSQL server: its own data directory, loopback port and unix socket directory. */
export interface TestPostgres {
  /** `postgres://` URL of a fresh database on the server. */
  url: string;
  /** Creates another empty database on the same server and answers its URL. */
  createDatabase(name?: string): Promise<string>;
  /** Stops the server (immediate mode: nothing of it is worth keeping) and removes its directory. */
  stop(): Promise<void>;
  /**
   * Takes the server down as a restarted database pod would (fast shutdown: clients are cut off),
   * keeping its data; `start` brings it back on the same port.
   */
  down(): Promise<void>;
  start(): Promise<void>;
}

const MISSING = 'PostgreSQL server binaries (initdb, pg_ctl) were not found on PATH nor in /usr/lib/postgresql/*/bin';
const HOW_TO_INSTALL = 'run .ci/run (it installs them), or `apt-get install postgresql`';

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The directory holding initdb, pg_ctl and postgres of one version. Debian keeps them in
 * /usr/lib/postgresql/<version>/bin, off PATH; a PATH entry may be a symlink into there, so it is
 * resolved to keep the three from the same version.
 */
export function findPostgresBin(): string {
  const candidates: string[] = [];
  if (process.env.PG_BIN) candidates.push(process.env.PG_BIN);
  for (const dir of (process.env.PATH ?? '').split(delimiter)) if (dir) candidates.push(dir);
  try {
    const versions = readdirSync('/usr/lib/postgresql')
      .filter((name) => /^\d+(\.\d+)?$/.test(name))
      .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a));
    for (const version of versions) candidates.push(join('/usr/lib/postgresql', version, 'bin'));
  } catch {
    // no Debian layout
  }
  for (const dir of candidates) {
    const initdb = join(dir, 'initdb');
    if (!isExecutable(initdb)) continue;
    const bin = dirname(realpathSync(initdb));
    if (isExecutable(join(bin, 'pg_ctl')) && isExecutable(join(bin, 'postgres'))) return bin;
  }
  throw new Error(`${MISSING}; ${HOW_TO_INSTALL}`);
}

/** initdb refuses to run as root, so as root the server runs as the `postgres` user. */
function serverUser(): { uid: number; gid: number; wrap: (argv: string[]) => [string, string[]] } | null {
  if (process.getuid?.() !== 0) return null;
  let uid: number;
  let gid: number;
  try {
    uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  } catch {
    throw new Error(`running as root needs a 'postgres' user to run the test server; ${HOW_TO_INSTALL}`);
  }
  const runuser = ['/usr/sbin/runuser', '/sbin/runuser', '/usr/bin/runuser'].find(isExecutable);
  const wrap = (argv: string[]): [string, string[]] =>
    runuser
      ? [runuser, ['-u', 'postgres', '--', ...argv]]
      : ['su', ['postgres', '-s', '/bin/sh', '-c', argv.map((arg) => `'${arg.replaceAll("'", `'\\''`)}'`).join(' ')]];
  return { uid, gid, wrap };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function describeFailure(error: unknown): string {
  const failed = error as { stderr?: string; stdout?: string; message?: string };
  return [failed.message, failed.stdout, failed.stderr].filter(Boolean).join('\n');
}

/** Starts a PostgreSQL server for one test file (call it in beforeAll; call `stop` in afterAll). */
/**
 * A new data directory, copied from one initdb made once per machine (per PostgreSQL and per these
 * settings): initdb took 1–3 s of every test server's start, and a whole `npm test` starts some
 * fifty. Copied by the server's own user, as initdb would have made it.
 */
async function copyTemplate(bin: string, exec: (argv: string[]) => Promise<void>, data: string): Promise<void> {
  const settings = [
    // Durability is worthless for a server that lives as long as one test file.
    `listen_addresses = '127.0.0.1'`,
    'fsync = off',
    'synchronous_commit = off',
    'full_page_writes = off',
    'max_connections = 200',
    '',
  ].join('\n');
  const key = createHash('sha256').update(bin).update(settings).digest('hex').slice(0, 12);
  const template = join(tmpdir(), `spool-pg-template-${process.getuid?.() ?? 0}-${key}`);
  if (!existsSync(join(template, 'PG_VERSION'))) {
    // Made aside, then renamed into place: another test process may be making it too.
    const making = `${template}.${process.pid}`;
    await exec([join(bin, 'initdb'), '-D', making, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync']);
    appendFileSync(join(making, 'postgresql.conf'), settings);
    try {
      renameSync(making, template);
    } catch {
      rmSync(making, { recursive: true, force: true });
    }
  }
  await exec(['cp', '-a', template, data]);
}

export async function startPostgres(): Promise<TestPostgres> {
  const bin = findPostgresBin();
  const user = serverUser();
  const command = (argv: string[]): [string, string[]] => (user ? user.wrap(argv) : [argv[0] ?? '', argv.slice(1)]);
  const exec = async (argv: string[]): Promise<void> => {
    const [file, args] = command(argv);
    await run(file, args, { encoding: 'utf8' });
  };

  const dir = mkdtempSync(join(tmpdir(), 'spool-pg-'));
  const data = join(dir, 'data');
  const log = join(dir, 'server.log');
  if (user) chownSync(dir, user.uid, user.gid);

  const pgCtlStop = ['-D', data, '-m', 'immediate', '-w', 'stop'];
  // A test process that dies without afterAll must not leave a server behind.
  const onExit = (): void => {
    try {
      const [file, args] = command([join(bin, 'pg_ctl'), ...pgCtlStop]);
      execFileSync(file, args, { stdio: 'ignore' });
    } catch {
      // not running
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);

  let port = 0;
  try {
    await copyTemplate(bin, exec, data);
    appendFileSync(join(data, 'postgresql.conf'), `unix_socket_directories = '${dir}'\n`);
    // The port is free when picked but may be taken before the server binds it: try a few.
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      try {
        await exec([join(bin, 'pg_ctl'), '-D', data, '-l', log, '-w', '-t', '60', '-o', `-p ${port}`, 'start']);
        break;
      } catch (error) {
        if (attempt >= 3) throw error;
      }
    }
  } catch (error) {
    let serverLog = '';
    try {
      serverLog = readFileSync(log, 'utf8').split('\n').slice(-20).join('\n');
    } catch {
      // no log yet
    }
    process.removeListener('exit', onExit);
    onExit();
    throw new Error(`could not start a test PostgreSQL server in ${dir}:\n${describeFailure(error)}\n${serverLog}`);
  }

  const urlOf = (database: string): string => `postgres://postgres@127.0.0.1:${port}/${database}`;
  let databases = 0;
  const createDatabase = async (name = `test_${++databases}`): Promise<string> => {
    const client = new pg.Client({ connectionString: urlOf('postgres') });
    await client.connect();
    try {
      await client.query(`create database "${name.replaceAll('"', '""')}"`);
    } finally {
      await client.end();
    }
    return urlOf(name);
  };

  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    process.removeListener('exit', onExit);
    try {
      await exec([join(bin, 'pg_ctl'), ...pgCtlStop]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  const down = async (): Promise<void> => {
    await exec([join(bin, 'pg_ctl'), '-D', data, '-m', 'fast', '-w', 'stop']);
  };
  const start = async (): Promise<void> => {
    await exec([join(bin, 'pg_ctl'), '-D', data, '-l', log, '-w', '-t', '60', '-o', `-p ${port}`, 'start']);
  };

  try {
    return { url: await createDatabase('spool_test'), createDatabase, stop, down, start };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Runs `fn` against a fresh server and stops it afterwards, whatever `fn` does. */
export async function withPostgresUrl<T>(fn: (url: string) => Promise<T>): Promise<T> {
  const server = await startPostgres();
  try {
    return await fn(server.url);
  } finally {
    await server.stop();
  }
}
