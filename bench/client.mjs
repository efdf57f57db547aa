#!/usr/bin/env node
/**
 * The in-script client: what a durable call from bash costs with the native client
 * (sdk/go/cmd/spool) and with the Node client, side by side in one loop, fresh and replayed, on
 * PGlite and on PostgreSQL; and how long a 100-step script spends replaying before its next new
 * call, with each client.
 *
 *   npm run bench:client                 # build first; rewrites its section of docs/benchmarks.md
 *   node bench/client.mjs --no-write     # prints only
 *
 * BENCH_CLIENT_STEPS (default 40) steps per client per run; BENCH_REPLAY_STEPS (default 100).
 * Every command is timed from inside bash with $EPOCHREALTIME (no fork for the clock).
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './lib/stats.mjs';
import { loadTestPostgres } from './lib/test-postgres.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DOC = join(ROOT, 'docs', 'benchmarks.md');
const BEGIN = '<!-- client-bench:begin -->';
const END = '<!-- client-bench:end -->';
const STEPS = Number.parseInt(process.env.BENCH_CLIENT_STEPS ?? '', 10) || 40;
const REPLAY_STEPS = Number.parseInt(process.env.BENCH_REPLAY_STEPS ?? '', 10) || 100;
const NODE_CLI = join(ROOT, 'bin', 'spool');
const NATIVE = join(ROOT, 'dist', 'native', `${process.platform}-${process.arch}`, 'spool');
const NOW = 'now() { t=${EPOCHREALTIME/[.,]/}; }';
const scratch = mkdtempSync(join(tmpdir(), 'spool-client-bench-'));
const started = Date.now();
const log = (line) => process.stderr.write(`[bench:client ${((Date.now() - started) / 1000).toFixed(0).padStart(3)}s] ${line}\n`);

const fmt = (ms) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));

function run(file, args, env = process.env) {
  return new Promise((resolveRun, reject) => {
    const child = spawn(file, args, { cwd: scratch, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.stdout.resume();
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolveRun() : reject(new Error(`${file} ${args.join(' ')} exited ${code}:\n${stderr}`))));
  });
}

/** name -> ms[] from lines of `name microseconds`. */
function samples(file) {
  const out = new Map();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const [name, value] = line.split(' ');
    if (!name || value === undefined) continue;
    out.set(name, [...(out.get(name) ?? []), Number(value) / 1000]);
  }
  return out;
}

/**
 * A Go hello-world built as the native client is (static, stripped): the least a Go program costs
 * to start, which issue 32 measures a call against (a fresh call ≤ 2×, a replayed one ≤ 1.3×).
 */
function buildHello() {
  const dir = join(scratch, 'hello');
  mkdirSync(dir);
  writeFileSync(join(dir, 'go.mod'), 'module hello\n\ngo 1.24\n');
  writeFileSync(join(dir, 'main.go'), 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello") }\n');
  execFileSync('go', ['build', '-trimpath', '-ldflags', '-s -w', '-o', 'hello', '.'], { cwd: dir, env: { ...process.env, CGO_ENABLED: '0' } });
  return join(dir, 'hello');
}

/**
 * One `spool run` whose loop makes, per iteration, a call with each client (each a new step name)
 * beside a `/bin/true` and a Go hello-world, then sleeps 1ms: pass 1 records every call (fresh),
 * pass 2 replays them.
 */
async function sideBySide(prefix, storeArgs, hello) {
  const out = join(scratch, `${prefix}.samples`);
  const timed = (id, command) => `  now; a=$t; ${command}; now; echo "${id} $((t - a))" >> "$out"`;
  const script = [
    NOW,
    `out="${out}.$SPOOL_PASS"`,
    ': > "$out"',
    `for ((i = 0; i < ${STEPS}; i++)); do`,
    timed('bin_true', '/bin/true'),
    timed('hello', `"${hello}" > /dev/null`),
    timed('native', `"${NATIVE}" step "n$i" -- true`),
    timed('node', `node "${NODE_CLI}" step "j$i" -- true`),
    'done',
    'spool sleep 1ms',
  ].join('\n');
  const file = join(scratch, `${prefix}.sh`);
  writeFileSync(file, script);
  await run(process.execPath, [NODE_CLI, 'run', file, ...storeArgs]);
  return { fresh: samples(`${out}.1`), replayed: samples(`${out}.2`) };
}

/** How long pass 2 of a script with `REPLAY_STEPS` recorded steps takes to reach its next new call. */
async function replayTime(client, storeArgs) {
  const out = join(scratch, `replay-${client}`);
  const script = [
    NOW,
    'now; begin=$t',
    `for ((i = 0; i < ${REPLAY_STEPS}; i++)); do spool step "s$i" -- true; done`,
    `now; echo $((t - begin)) > "${out}.$SPOOL_PASS"`,
    'spool sleep 1ms',
  ].join('\n');
  const file = join(scratch, `replay-${client}.sh`);
  writeFileSync(file, script);
  await run(process.execPath, [NODE_CLI, 'run', file, ...storeArgs], { ...process.env, SPOOL_CLIENT: client });
  return Number(readFileSync(`${out}.2`, 'utf8')) / 1000;
}

async function main() {
  if (!existsSync(NATIVE)) throw new Error(`no native client at ${NATIVE}: run npm run build (needs Go)`);
  const rows = [];
  const add = (store, what, values, base, hello) => rows.push({ store, what, median: median(values), n: values.length, base, hello });
  const hello = buildHello();
  const replays = [];
  const stores = [['PGlite', ['--data-dir', join(scratch, 'pglite')]]];
  let server = null;
  try {
    const { startPostgres } = await loadTestPostgres(ROOT);
    server = await startPostgres();
    stores.push(['PostgreSQL', ['--database-url', server.url]]);
  } catch (error) {
    log(`no PostgreSQL: ${String(error?.message ?? error).split('\n')[0]}`);
  }
  try {
    for (const [store, args] of stores) {
      log(`${store}: ${STEPS} calls per client, fresh then replayed`);
      const { fresh, replayed } = await sideBySide(store.toLowerCase(), args, hello);
      const trues = [...fresh.get('bin_true'), ...replayed.get('bin_true')];
      const hellos = [...fresh.get('hello'), ...replayed.get('hello')];
      const base = median(trues);
      const helloBase = median(hellos);
      add(store, '`/bin/true`', trues, base, helloBase);
      add(store, 'Go hello-world (static, stripped)', hellos, base, helloBase);
      add(store, 'native client, fresh `spool step sN -- true`', fresh.get('native'), base, helloBase);
      add(store, 'native client, replayed', replayed.get('native'), base, helloBase);
      add(store, 'Node client, fresh', fresh.get('node'), base, helloBase);
      add(store, 'Node client, replayed', replayed.get('node'), base, helloBase);
      for (const client of ['node', 'native']) {
        log(`${store}: a ${REPLAY_STEPS}-step replay with the ${client} client`);
        replays.push({ store, client, ms: await replayTime(client, [...args.slice(0, 1), `${args[1]}${args[0] === '--data-dir' ? `-${client}` : ''}`]) });
      }
    }
  } finally {
    await server?.stop();
  }
  const table = [
    '| store | call | n | median ms | × `/bin/true` | × Go hello-world |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows.map((row) => `| ${row.store} | ${row.what} | ${row.n} | ${fmt(row.median)} | ${(row.median / row.base).toFixed(1)}× | ${(row.median / row.hello).toFixed(2)}× |`),
  ];
  const replayTable = [
    `| store | client | pass 2 of a ${REPLAY_STEPS}-step script, until its next new call |`,
    '| --- | --- | --- |',
    ...replays.map((r) => `| ${r.store} | ${r.client === 'native' ? 'native' : 'Node'} | ${(r.ms / 1000).toFixed(2)} s |`),
  ];
  const ratio = (store, a, b) => {
    const get = (what) => rows.find((row) => row.store === store && row.what.startsWith(what))?.median ?? Number.NaN;
    return (get(b) / get(a)).toFixed(0);
  };
  const section = [
    BEGIN,
    '## The in-script client: native and Node side by side',
    '',
    `\`npm run bench:client\` (\`bench/client.mjs\`), ${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores, load ` +
      `${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')} at the end. One \`spool run\` per store whose loop ` +
      `makes, per iteration, a \`/bin/true\`, a Go hello-world, a call with the native client and a call with the Node client (each a new step, ` +
      `so pass 1 records them all and pass 2, after a \`spool sleep 1ms\`, replays them all), timed from bash with ` +
      '`$EPOCHREALTIME`; the medians below come from that one run per store.',
    '',
    ...table,
    '',
    `The native client is ${ratio('PGlite', 'native client, fresh', 'Node client, fresh')}× faster than the Node client on a ` +
      `fresh call and ${ratio('PGlite', 'native client, replayed', 'Node client, replayed')}× on a replayed one (PGlite).`,
    '',
    ...replayTable,
    '',
    END,
  ].join('\n');
  process.stdout.write(`${section}\n`);
  if (!process.argv.includes('--no-write')) {
    const previous = existsSync(DOC) ? readFileSync(DOC, 'utf8') : '';
    const kept = previous.includes(BEGIN) ? previous.slice(0, previous.indexOf(BEGIN)).trimEnd() + previous.slice(previous.indexOf(END) + END.length) : previous.trimEnd();
    writeFileSync(DOC, `${kept.trimEnd()}\n\n${section}\n`);
    log(`wrote ${DOC}`);
  }
}

try {
  await main();
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
