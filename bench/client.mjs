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
import { createServer } from 'node:net';
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

/** A Go program of this source, built as the native client is (static, stripped): its path. */
function buildGo(name, source) {
  const dir = join(scratch, name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'go.mod'), `module ${name}\n\ngo 1.24\n`);
  writeFileSync(join(dir, 'main.go'), source);
  execFileSync('go', ['build', '-trimpath', '-ldflags', '-s -w', '-o', name, '.'], { cwd: dir, env: { ...process.env, CGO_ENABLED: '0' } });
  return join(dir, name);
}

/**
 * A Go hello-world: the least a Go program costs to start, which issue 32 measures a call against
 * (a fresh call ≤ 2×, a replayed one ≤ 1.3×).
 */
const buildHello = () => buildGo('hello', 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello") }\n');

/**
 * The floor of a replayed call in this design (a process per call, a Node agent): a Go program that
 * makes one request on a new Unix-socket connection (raw system calls, nothing else) to a Node
 * server that answers every line at once, with a replayed step's answer.
 */
const buildRoundTrip = () =>
  buildGo(
    'roundtrip',
    `package main

import (
\t"os"
\t"syscall"
)

func main() {
\tfd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
\tif err != nil {
\t\tos.Exit(1)
\t}
\tif syscall.Connect(fd, &syscall.SockaddrUnix{Name: os.Getenv("FLOOR_SOCKET")}) != nil {
\t\tos.Exit(1)
\t}
\tsyscall.Write(fd, []byte("{\\"verb\\":\\"step\\",\\"name\\":\\"s\\"}\\n"))
\tbuf := make([]byte, 4096)
\tfor got := 0; got == 0 || buf[got-1] != '\\n'; {
\t\tn, err := syscall.Read(fd, buf[got:])
\t\tif err != nil || n == 0 {
\t\t\tos.Exit(1)
\t\t}
\t\tgot += n
\t}
}
`,
  );

/** A Node server answering each line on its socket at once, as the agent answers a replayed step. */
function startEchoServer(path) {
  const answer = `${JSON.stringify({ status: 'ok', stdout: '', exitCode: 0, replayed: true })}\n`;
  const server = createServer((socket) => socket.on('data', () => socket.write(answer)));
  return new Promise((resolveListen) => server.listen(path, () => resolveListen(server)));
}

/**
 * One `spool run` of two loops, each call a new step, then a 1 ms sleep: pass 1 records every call
 * (fresh), pass 2 replays them. The first loop makes, per iteration, a native call beside what it
 * is measured against: a `/bin/true`, a Go hello-world, the native client with no agent to talk
 * to (its own start: it exits at once, saying so), the floor's Go round trip (buildRoundTrip)
 * to a bare Node server, and the native client's replayed call answered by that bare server (the
 * client's whole cost with nothing of the agent's). The Node client has a loop of its own after it: its 130 ms of compiling
 * and collecting, in the same loop, slowed the calls after it by about a third.
 */
async function sideBySide(prefix, storeArgs, programs) {
  const out = join(scratch, `${prefix}.samples`);
  const timed = (id, command) => `  now; a=$t; ${command}; now; echo "${id} $((t - a))" >> "$out"`;
  const script = [
    NOW,
    `out="${out}.$SPOOL_PASS"`,
    ': > "$out"',
    `for ((i = 0; i < ${STEPS}; i++)); do`,
    timed('bin_true', '/bin/true'),
    timed('hello', `"${programs.hello}" > /dev/null`),
    timed('native', `"${NATIVE}" step "n$i" -- true`),
    timed('native_alone', `SPOOL_SOCKET= "${NATIVE}" step "x" -- true 2> /dev/null || true`),
    timed('round_trip', `FLOOR_SOCKET="${programs.floorSocket}" "${programs.roundTrip}"`),
    timed('native_echo', `SPOOL_SOCKET="${programs.floorSocket}" "${NATIVE}" step "x" -- true`),
    'done',
    `for ((i = 0; i < ${STEPS}; i++)); do`,
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
  const floorSocket = join(scratch, 'floor.sock');
  const programs = { hello: buildHello(), roundTrip: buildRoundTrip(), floorSocket };
  const echo = await startEchoServer(floorSocket);
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
      const { fresh, replayed } = await sideBySide(store.toLowerCase(), args, programs);
      const trues = [...fresh.get('bin_true'), ...replayed.get('bin_true')];
      const hellos = [...fresh.get('hello'), ...replayed.get('hello')];
      const base = median(trues);
      const helloBase = median(hellos);
      add(store, '`/bin/true`', trues, base, helloBase);
      add(store, 'Go hello-world (static, stripped)', hellos, base, helloBase);
      add(store, 'native client, fresh `spool step sN -- true`', fresh.get('native'), base, helloBase);
      add(store, 'native client, replayed', replayed.get('native'), base, helloBase);
      add(store, '&nbsp;&nbsp;the native client alone (no agent: it exits at once)', [...fresh.get('native_alone'), ...replayed.get('native_alone')], base, helloBase);
      add(store, '&nbsp;&nbsp;the floor: a Go round trip to a bare Node server (new connection, raw syscalls)', [...fresh.get('round_trip'), ...replayed.get('round_trip')], base, helloBase);
      add(store, '&nbsp;&nbsp;the native client answered by that bare server (its start and its round trip; no agent)', [...fresh.get('native_echo'), ...replayed.get('native_echo')], base, helloBase);
      add(store, 'Node client, fresh', fresh.get('node'), base, helloBase);
      add(store, 'Node client, replayed', replayed.get('node'), base, helloBase);
      for (const client of ['node', 'native']) {
        log(`${store}: a ${REPLAY_STEPS}-step replay with the ${client} client`);
        replays.push({ store, client, ms: await replayTime(client, [...args.slice(0, 1), `${args[1]}${args[0] === '--data-dir' ? `-${client}` : ''}`]) });
      }
    }
  } finally {
    await server?.stop();
    echo.close();
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
      `${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')} at the end. One \`spool run\` per store whose first loop ` +
      `makes, per iteration, a \`/bin/true\`, a Go hello-world, a call with the native client, the native client with no agent (its own start), ` +
      `a Go program's one round trip to a bare Node server (the floor of a call in this design) and the native client answered by that ` +
      `bare server, and whose second loop makes the Node ` +
      `client's calls (each call a new step, so pass 1 records them all and pass 2, after a \`spool sleep 1ms\`, replays them all), timed ` +
      'from bash with `$EPOCHREALTIME`; the medians below come from that one run per store. A replayed call is the client\'s own start ' +
      'and one round trip to the agent: the indented rows are the client\'s start alone, the floor of the round trip, and the client\'s ' +
      'whole call with a bare server in the agent\'s place (the difference from a replayed call is the agent\'s).',
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
