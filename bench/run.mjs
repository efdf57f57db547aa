#!/usr/bin/env node
/**
 * Hyperspool micro-benchmarks: what one durable call costs a script.
 *
 *   npm run bench                  # build, run everything, print a table, rewrite docs/benchmarks.md
 *   node bench/run.mjs --no-write  # same, without touching docs/benchmarks.md
 *
 * Sample counts can be changed with BENCH_STEPS (steps per `spool run`, default 60),
 * BENCH_PG_STEPS (steps per `spool run` on PostgreSQL, default 30), BENCH_STARTS (start-up
 * samples per command, default 50) and BENCH_WRITES (journal writes per store, default 200).
 *
 * Everything that runs in bash is timed from inside bash with $EPOCHREALTIME (a builtin variable,
 * no fork), so the clock costs microseconds rather than the ~1 ms of a `date +%s%N` fork.
 * Journal writes are timed in-process with process.hrtime.
 */
import { spawn, execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median, percentile } from './lib/stats.mjs';
import { loadTestPostgres } from './lib/test-postgres.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DOC = join(ROOT, 'docs', 'benchmarks.md');
const WRITE_DOC = !process.argv.includes('--no-write');

const intEnv = (name, fallback) => {
  const value = Number.parseInt(process.env[name] ?? '', 10);
  return Number.isInteger(value) && value > 0 ? value : fallback;
};
const STEPS = intEnv('BENCH_STEPS', 60);
const PG_STEPS = intEnv('BENCH_PG_STEPS', 30);
const STARTS = intEnv('BENCH_STARTS', 50);
const WRITES = intEnv('BENCH_WRITES', 200);

const started = Date.now();
const loadAtStart = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const scratch = mkdtempSync(join(tmpdir(), 'spool-bench-'));

/**
 * A private copy of the build (bin/, dist/, src/ for the files dist/ reads at run time such as the
 * migrations, package.json; node_modules linked), so that a `npm run build` elsewhere in the tree
 * cannot swap files under a run that takes minutes.
 */
const TREE = join(scratch, 'tree');
for (const part of ['bin', 'dist', 'src']) cpSync(join(ROOT, part), join(TREE, part), { recursive: true });
cpSync(join(ROOT, 'package.json'), join(TREE, 'package.json'));
symlinkSync(join(ROOT, 'node_modules'), join(TREE, 'node_modules'), 'dir');
const SPOOL = join(TREE, 'bin', 'spool');
const notes = [];
const log = (line) =>
  process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(3)}s] ${line}\n`);

// ---------------------------------------------------------------------------------------------
// statistics

/** id -> { id, label, group, samples (ms) }; reported grouped, groups in first-seen order unless ranked. */
const results = new Map();
/** `base` and `node`: the rows (same loop) a median is divided by in the two ratio columns. */
function record(id, group, label, samples, base = 'bin_true', node = 'node_cjs') {
  results.set(id, { id, group, label, samples, base, node, median: median(samples), p90: percentile(samples, 90) });
}
/** Rows in report order: step groups first, then journal writes, then start-up. */
function ordered() {
  const rank = (group) => (group.startsWith('`spool step`') ? 0 : group.startsWith('journal') ? 1 : 2);
  const groups = [...new Set([...results.values()].map((r) => r.group))];
  groups.sort((a, b) => rank(a) - rank(b));
  return groups.flatMap((group) => [...results.values()].filter((r) => r.group === group));
}
const med = (id) => results.get(id)?.median ?? Number.NaN;

// ---------------------------------------------------------------------------------------------
// processes

function runProcess(file, args, options = {}) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolvePromise({ code, stdout, stderr }));
  });
}

/** Parses lines of `name value-in-µs` into name -> ms[]. */
function parseSamples(text) {
  const out = new Map();
  for (const line of text.split('\n')) {
    const [name, value] = line.trim().split(/\s+/);
    if (!name || value === undefined) continue;
    if (!out.has(name)) out.set(name, []);
    out.get(name).push(Number(value) / 1000);
  }
  return out;
}

const NOW = 'now() { t=${EPOCHREALTIME/[.,]/}; }';

// ---------------------------------------------------------------------------------------------
// 4. start-up: node, the in-script client without an agent, and its import graph

async function benchStartup() {
  log(`start-up: ${STARTS} rounds of true, /bin/true, node -e 0, imports, spool step without an agent`);
  const commands = [
    ['builtin', 'true'],
    ['bin_true', '/bin/true'],
    ['node_cjs', 'node -e 0'],
    ['node_esm', 'node --input-type=module -e 0'],
    // Also prints the import's own duration, timed inside Node (less noisy than a difference of two starts).
    [
      'import_run_verb',
      `node --input-type=module -e "const t = performance.now(); await import('./dist/cli/script/run-verb.js'); ` +
        `console.log('import_inproc', Math.round((performance.now() - t) * 1000))"`,
    ],
    ['spool_shebang', 'bin/spool step x -- true 2>/dev/null || [ $? -eq 69 ]'],
  ];
  const script = [
    'set -u',
    'unset SPOOL_SOCKET',
    NOW,
    `for ((i = 0; i < ${STARTS}; i++)); do`,
    ...commands.flatMap(([id, command]) => [`  now; a=$t; ${command}; now; echo "${id} $((t - a))"`]),
    'done',
  ].join('\n');
  const file = join(scratch, 'startup.sh');
  writeFileSync(file, script);
  const env = { ...process.env };
  delete env.SPOOL_SOCKET;
  const { code, stdout, stderr } = await runProcess('bash', [file], { cwd: TREE, env });
  if (code !== 0) throw new Error(`start-up loop failed (${code}):\n${stderr}`);
  const samples = parseSamples(stdout);
  const labels = {
    builtin: 'bash builtin `true`',
    bin_true: '`/bin/true` (fork + exec)',
    node_cjs: '`node -e 0`',
    node_esm: '`node --input-type=module -e 0`',
    import_run_verb: '`node --input-type=module -e "await import(\'./dist/cli/script/run-verb.js\')"`',
    spool_shebang: '`bin/spool step x -- true` via `#!/usr/bin/env node`, no agent (exit 69)',
  };
  for (const [id] of commands) record(id, 'start-up (no agent)', labels[id], samples.get(id) ?? []);
  record(
    'import_inproc',
    'start-up (no agent)',
    "`await import('./dist/cli/script/run-verb.js')` alone, timed inside Node",
    samples.get('import_inproc') ?? [],
  );
}

// ---------------------------------------------------------------------------------------------
// 1 + 2. fresh and replayed `spool step` from bash, inside `spool run`

/**
 * One `spool run` of a bash script that reaches `steps` new steps, then `spool sleep 1ms`: pass 1
 * records the steps (fresh), the sleep ends the pass, pass 2 replays every step from the journal
 * and records the sleep's result. Each iteration times a builtin `true`, `/bin/true`, the same
 * client with no agent (SPOOL_SOCKET empty: exit 69) and the step; with `withNode`, also `node -e 0`.
 * Load on a shared machine drifts between passes, so the differences that matter are also taken
 * pairwise, iteration by iteration, between commands timed a few milliseconds apart.
 */
async function benchSteps(prefix, label, steps, storeArgs, withNode) {
  const out = join(scratch, `${prefix}-samples`);
  const timed = (id, command) => `  now; a=$t; ${command}; now; echo "${id} $((t - a))" >> "$out"`;
  const script = [
    '#!/usr/bin/env bash',
    NOW,
    `out="${out}.$SPOOL_PASS"`,
    ': > "$out"',
    `for ((i = 0; i < ${steps}; i++)); do`,
    timed('builtin', 'true'),
    timed('bin_true', '/bin/true'),
    ...(withNode ? [timed('node', 'node -e 0')] : []),
    timed('no_agent', 'SPOOL_SOCKET= spool step x -- true 2>/dev/null || [ $? -eq 69 ]'),
    timed('step', 'spool step "s$i" -- true'),
    'done',
    'spool sleep 1ms',
  ].join('\n');
  const file = join(scratch, `${prefix}.sh`);
  writeFileSync(file, script);
  log(`spool run on ${label}: ${steps} fresh steps (pass 1), then ${steps} replayed (pass 2)`);
  const t0 = Date.now();
  // The Node client, whose start-up the interpretation below weighs; the native one, the default
  // where it is built, is `npm run bench:client`'s (the side-by-side section).
  const env = { ...process.env, SPOOL_CLIENT: 'node' };
  const { code, stderr } = await runProcess('node', [SPOOL, 'run', file, ...storeArgs], { cwd: scratch, env });
  const wall = Date.now() - t0;
  if (code !== 0) throw new Error(`spool run on ${label} failed (${code}):\n${stderr}`);
  const pass1 = parseSamples(readFileSync(`${out}.1`, 'utf8'));
  const pass2 = parseSamples(readFileSync(`${out}.2`, 'utf8'));
  if ((pass1.get('step') ?? []).length !== steps || (pass2.get('step') ?? []).length !== steps) {
    throw new Error(`spool run on ${label}: expected ${steps} samples per pass`);
  }
  const both = (id) => [...(pass1.get(id) ?? []), ...(pass2.get(id) ?? [])];
  /** a[i] - b[i]: two commands of one iteration. */
  const paired = (pass, a, b) => pass.get(a).map((value, i) => value - pass.get(b)[i]);
  const group = `\`spool step\` from bash, inside \`spool run\` (${label})`;
  const base = `${prefix}_bin_true`;
  const node = withNode ? `${prefix}_node` : 'node_cjs';
  const row = (id, text, samples) => record(`${prefix}_${id}`, group, text, samples, base, node);
  row('fresh', 'fresh `spool step sN -- true` (pass 1)', pass1.get('step'));
  row('replay', 'replayed `spool step sN -- true` (pass 2)', pass2.get('step'));
  row('no_agent', '`SPOOL_SOCKET= spool step x -- true`: no agent, exit 69 (both passes)', both('no_agent'));
  if (withNode) row('node', '`node -e 0` (both passes)', both('node'));
  row('bin_true', '`/bin/true` (both passes)', both('bin_true'));
  row('builtin', 'builtin `true` (both passes)', both('builtin'));
  row('d_fresh', '↳ fresh step − no-agent client, same iteration (pass 1)', paired(pass1, 'step', 'no_agent'));
  row('d_replay', '↳ replayed step − no-agent client, same iteration (pass 2)', paired(pass2, 'step', 'no_agent'));
  if (withNode) {
    row('d_client', '↳ no-agent client − `node -e 0`, same iteration (both passes)', [
      ...paired(pass1, 'no_agent', 'node'),
      ...paired(pass2, 'no_agent', 'node'),
    ]);
  }
  return wall;
}

// ---------------------------------------------------------------------------------------------
// 3. journal writes, in-process

/** What `spool step` writes: a `call` entry, then a `result` entry at the same position. */
async function benchJournal(id, label, store, writes) {
  const runId = `bench-${id}-${Date.now()}`;
  await store.createRun({ id: runId, project: 'bench', workflow: 'bench', interpreter: 'bash', script: '' });
  const entry = (position, kind) => ({
    runId,
    position,
    kind,
    verb: 'step',
    name: `s${position}`,
    occurrence: 0,
    data: kind === 'call' ? {} : { stdout: '', exitCode: 0 },
  });
  const warmup = 10;
  const samples = [];
  for (let i = 0; i < warmup + writes / 2; i++) {
    for (const kind of ['call', 'result']) {
      const t0 = process.hrtime.bigint();
      await store.appendJournal(entry(i, kind));
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (i >= warmup) samples.push(ms);
    }
  }
  const journal = await store.readJournal(runId);
  if (journal.length !== 2 * (warmup + writes / 2)) throw new Error(`${label}: journal has ${journal.length} entries`);
  record(`journal_${id}`, 'journal write (`store.appendJournal`, in-process)', label, samples);
}

async function pgQuery(url, sql) {
  const require = createRequire(join(ROOT, 'package.json'));
  const pg = (await import(pathToFileURL(require.resolve('pg')).href)).default;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------------
// report

const fmt = (ms) => {
  if (!Number.isFinite(ms)) return 'n/a';
  const size = Math.abs(ms);
  const text = size < 0.1 ? `${(size * 1000).toFixed(0)} µs` : size < 10 ? size.toFixed(2) : size.toFixed(1);
  return ms < 0 ? `−${text}` : text;
};
const ratio = (ms, base) =>
  !Number.isFinite(ms) || !Number.isFinite(base) || base <= 0
    ? 'n/a'
    : `${(ms / base).toFixed(ms / base < 1 ? 2 : 1)}×`;

function table() {
  const header = ['measurement', 'n', 'median ms', 'p90 ms', '× `/bin/true`', '× `node -e 0`'];
  const lines = [];
  let group = '';
  for (const r of ordered()) {
    if (r.group !== group) {
      group = r.group;
      lines.push([`**${group}**`, '', '', '', '', '']);
    }
    lines.push([
      r.label,
      String(r.samples.length),
      fmt(r.median),
      fmt(r.p90),
      ratio(r.median, med(r.base)),
      ratio(r.median, med(r.node)),
    ]);
  }
  return [header, header.map(() => '---'), ...lines].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

function consoleTable() {
  const header = ['measurement', 'n', 'median ms', 'p90 ms', 'x /bin/true', 'x node -e 0'];
  const rows = ordered().map((r) => [
    r.label.replace(/`/g, ''),
    String(r.samples.length),
    fmt(r.median),
    fmt(r.p90),
    ratio(r.median, med(r.base)),
    ratio(r.median, med(r.node)),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells) =>
    cells.map((cell, i) => (i >= 1 ? cell.padStart(widths[i]) : cell.padEnd(widths[i]))).join('  ');
  const out = [line(header), widths.map((w) => '-'.repeat(w)).join('  ')];
  let group = '';
  ordered().forEach((r, i) => {
    if (r.group !== group) out.push(`${(group = r.group).replace(/`/g, '')}:`);
    out.push(line(rows[i]));
  });
  return out.join('\n');
}

/** The static import graph of a compiled module: local files and node: built-ins it loads. */
function importGraph(entry) {
  const local = new Set();
  const builtins = new Set();
  const visit = (file) => {
    if (local.has(file)) return;
    local.add(file);
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/^\s*import\s+(?!type\b)[^'"]*?['"]([^'"]+)['"]/gm)) {
      const spec = match[1];
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec));
      else builtins.add(spec);
    }
  };
  try {
    visit(entry);
  } catch {
    // a file being rebuilt; report what was seen
  }
  return { local: local.size, builtins: [...builtins].sort() };
}

const loadAverage = () => safe(() => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '));

function safe(fn) {
  try {
    return fn();
  } catch {
    return 'unknown';
  }
}

function machine() {
  return {
    nproc: safe(() => execFileSync('nproc', { encoding: 'utf8' }).trim()),
    cpu: cpus()[0]?.model ?? 'unknown',
    memGiB: (totalmem() / 2 ** 30).toFixed(0),
    kernel: safe(() => execFileSync('uname', ['-r'], { encoding: 'utf8' }).trim()),
    node: process.version,
    bash: safe(() => execFileSync('bash', ['-c', 'echo $BASH_VERSION'], { encoding: 'utf8' }).trim()),
    pglite: safe(
      () => JSON.parse(readFileSync(join(ROOT, 'node_modules/@electric-sql/pglite/package.json'), 'utf8')).version,
    ),
    postgres: safe(() => execFileSync('postgres', ['--version'], { encoding: 'utf8' }).trim()),
    commit: safe(() => execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim()),
    dirty: safe(() =>
      execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: ROOT, encoding: 'utf8' }).trim()
        ? 'yes'
        : 'no',
    ),
  };
}

function interpretation() {
  const m = (id) => med(id);
  /** A difference of two medians, signed: on a noisy machine a small one may be noise. */
  const d = (a, b) => {
    const value = m(a) - m(b);
    return Number.isFinite(value) ? `${value < 0 ? '−' : ''}${fmt(Math.abs(value))}` : 'n/a';
  };
  const graph = importGraph(join(TREE, 'dist/cli/script/run-verb.js'));
  const pct = (part, whole) =>
    Number.isFinite(part / whole) ? `${Math.max(0, Math.round((100 * part) / whole))} %` : 'n/a';
  /** "About 70 %" of a whole, in words that survive noise pushing the part past the whole. */
  const share = (part, whole) => {
    const pct = Math.round((100 * part) / whole);
    if (!Number.isFinite(pct)) return 'Some';
    return pct >= 95 ? 'Nearly all' : `About ${pct} %`;
  };
  const lines = [
    `- **A durable call from bash costs about one Node start-up.** In the same loop, a fresh \`spool step\` takes ` +
      `${fmt(m('pglite_fresh'))} ms and a replayed one ${fmt(m('pglite_replay'))} ms (medians), against ` +
      `${fmt(m('pglite_bin_true'))} ms for \`/bin/true\` (${ratio(m('pglite_fresh'), m('pglite_bin_true'))} and ` +
      `${ratio(m('pglite_replay'), m('pglite_bin_true'))}), ${fmt(m('pglite_builtin'))} for the builtin \`true\`, and ` +
      `${fmt(m('pglite_node'))} ms for \`node -e 0\`, which alone is ${ratio(m('pglite_node'), m('pglite_replay'))} of a ` +
      `replayed call and ${ratio(m('pglite_node'), m('pglite_fresh'))} of a fresh one.`,
    `- **The client's own start-up adds a few tens of milliseconds to Node's.** With no agent, \`spool step\` (exit 69) ` +
      `takes ${fmt(m('pglite_d_client'))} ms longer than the \`node -e 0\` timed just before it (paired median). ` +
      `${share(m('import_inproc'), m('pglite_d_client'))} of that is loading the client's import graph (${graph.local} compiled ES modules from run-verb.js down, plus ` +
      `${graph.builtins.join(', ')}): ${fmt(m('import_inproc'))} ms timed inside Node (start-up loop). The rest is the ` +
      `entry point (\`#!/usr/bin/env node\` → \`bin/spool\` → \`dist/cli/main.js\` → a dynamic import of run-verb.js), ` +
      `argument parsing and exit. For scale, an ES-module entry by itself (\`node --input-type=module -e 0\` vs ` +
      `\`node -e 0\`, start-up loop) comes to ${d('node_esm', 'node_cjs')} ms.`,
    `- **Talking to the agent is cheap, and a replayed call touches no store.** A replayed call takes ` +
      `${fmt(m('pglite_d_replay'))} ms more than the no-agent exit of the same iteration: connecting to the unix socket, one ` +
      `NDJSON request and answer (the agent finds the call in the journal it read when the pass started), closing.`,
    `- **A fresh call adds the command, a second round trip and two journal writes.** A fresh call takes ` +
      `${fmt(m('pglite_d_fresh'))} ms more than the no-agent exit of the same iteration, ${d('pglite_d_fresh', 'pglite_d_replay')} ms ` +
      `more than a replayed one does. That covers spawning \`true\` through Node's child_process (${fmt(m('pglite_bin_true'))} ms ` +
      `as a bare fork + exec from bash), the \`done\` request, and two \`appendJournal\` calls (call, result) at ` +
      `${fmt(m('journal_pglite_disk'))} ms each (median; p90 ${fmt(results.get('journal_pglite_disk')?.p90)} ms) on a PGlite ` +
      `data directory.`,
    Number.isFinite(m('pg_fresh'))
      ? `- **PostgreSQL vs PGlite.** A journal write takes ${fmt(m('journal_pg'))} ms on the throwaway PostgreSQL server as ` +
        `the tests configure it (fsync off), ${fmt(m('journal_pg_durable'))} ms with fsync, synchronous_commit and ` +
        `full_page_writes on, ${fmt(m('journal_pglite_disk'))} ms on a PGlite data directory and ` +
        `${fmt(m('journal_pglite_mem'))} ms on in-memory PGlite. Through \`spool run --database-url\`, a fresh call costs ` +
        `${fmt(m('pg_d_fresh'))} ms and a replayed one ${fmt(m('pg_d_replay'))} ms over the no-agent exit (PGlite: ` +
        `${fmt(m('pglite_d_fresh'))} and ${fmt(m('pglite_d_replay'))} ms). Everything a fresh call adds to a replayed one ` +
        `(the command, \`done\`, two writes) is ${d('pg_d_fresh', 'pg_d_replay')} ms on PostgreSQL and ` +
        `${d('pglite_d_fresh', 'pglite_d_replay')} ms on PGlite, which runs inside the agent's process and so competes for ` +
        `the same 2 cores as the script's processes: an upper bound of ` +
        `${pct(m('pg_d_fresh') - m('pg_d_replay'), m('pg_fresh'))} and ` +
        `${pct(m('pglite_d_fresh') - m('pglite_d_replay'), m('pglite_fresh'))} of a fresh call for the store. ` +
        `(The PostgreSQL run's raw medians, ${fmt(m('pg_fresh'))} and ` +
        `${fmt(m('pg_replay'))} ms, come from another minute of a drifting load; compare its paired rows.)`
      : '- **PostgreSQL** was not measured on this run (see the notes above); the PGlite rows stand alone.',
    `- **Where the time goes, then:** a replayed call ≈ \`node -e 0\` (${fmt(m('pglite_node'))} ms) + loading the client ` +
      `(${fmt(m('pglite_d_client'))} ms) + the agent round trip (${fmt(m('pglite_d_replay'))} ms); a fresh call adds ` +
      `${d('pglite_d_fresh', 'pglite_d_replay')} ms. Starting a Node process per call dominates; the store, the socket ` +
      `protocol and the engine are a small fraction. Replay pays the same per-call start-up, so a script with 100 recorded ` +
      `steps spends about ${((m('pglite_replay') * 100) / 1000).toFixed(1)} s on this machine before it reaches its next ` +
      `new call. Cheaper calls need a lighter client process, not a faster store.`,
    '',
    'Differences of medians on a shared 2-core machine are rough: a few milliseconds either way is noise.',
  ];
  return lines.join('\n');
}

/** The repository's prettier style (aligned tables), if prettier is installed. */
async function formatMarkdown(text) {
  try {
    const prettier = await import('prettier');
    const config = (await prettier.resolveConfig(DOC)) ?? {};
    return await prettier.format(text, { ...config, parser: 'markdown' });
  } catch (error) {
    log(`docs/benchmarks.md left unformatted: ${error?.message ?? error}`);
    return text;
  }
}

async function writeDoc(info, wallTimes, totalSeconds) {
  const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const doc = `# Benchmarks

What one durable call costs a script, measured by \`npm run bench\` (\`bench/run.mjs\`). The numbers below are **medians
(and p90) from one run on one machine**; it has ${info.nproc} cores and is shared and noisy, so read them as orders of
magnitude and ratios, not as precise figures. Re-run \`npm run bench\` to regenerate this file
(\`node bench/run.mjs --no-write\` prints the table without touching it).

## Run

- date: ${date}
- machine: ${info.nproc} × ${info.cpu}, ${info.memGiB} GiB RAM, Linux ${info.kernel}
- software: Node ${info.node}, bash ${info.bash}, PGlite ${info.pglite}, ${info.postgres}
- tree: ${info.commit}${info.dirty === 'yes' ? ' with uncommitted changes in src/' : ''}
- whole bench: ${totalSeconds.toFixed(0)} s (${wallTimes})
- load average (1/5/15 min) at start: ${loadAtStart}; at end: ${loadAverage()}

## Method

- **Fresh and replayed \`spool step\`.** \`node bin/spool run bench.sh --data-dir DIR\` runs a bash script (\`bash -eu\`,
  the Node client, \`SPOOL_CLIENT=node\`, as \`spool\` on the PATH \`spool run\` gives it; the native client is measured beside it in its own section) whose loop calls \`spool step s$i -- true\` ${STEPS} times, each
  with a new name, then \`spool sleep 1ms\`. Pass 1 records every step (fresh calls); the sleep ends the pass, and pass 2
  re-runs the script from the top, so every step is answered from the journal (replayed calls). Each iteration also
  times, just before its step, a builtin \`true\`, \`/bin/true\`, \`node -e 0\` and \`SPOOL_SOCKET= spool step x -- true\`
  (the same client finding no agent: exit 69). The script times every command itself with bash's \`$EPOCHREALTIME\` (a
  variable, not a \`date +%s%N\` fork, so the clock adds microseconds) and writes one file per \`$SPOOL_PASS\`. The
  same script, without \`node -e 0\`, runs against PostgreSQL with \`--database-url\` (${PG_STEPS} steps).
- **The build measured** is a copy of \`bin/\`, \`dist/\` (and \`src/\`, for the migrations) taken when the bench starts (right after
  \`npm run build\`), so a rebuild elsewhere in the tree cannot change it mid-run; relative paths below are in it.
- **Paired rows (↳).** The load on this machine drifts from minute to minute, so pass 1 and pass 2 (and the two
  \`spool run\`s) do not see the same machine. A ↳ row is the median of per-iteration differences between two commands
  timed milliseconds apart, which cancels most of the drift; a difference of two medians from different passes does not.
- **Start-up (no agent).** A separate bash loop, ${STARTS} rounds with \`SPOOL_SOCKET\` unset,
  times in turn: builtin \`true\`, \`/bin/true\`, \`node -e 0\`, \`node --input-type=module -e 0\`,
  \`node --input-type=module -e "await import('./dist/cli/script/run-verb.js')"\` (the in-script client's import graph;
  that process also prints how long the import itself took by \`performance.now()\`) and \`bin/spool step x -- true\`
  through its \`#!/usr/bin/env node\` line (no agent: exit 69).
- **Journal writes.** In one Node process, \`store.appendJournal\` is called for a \`call\` and then a \`result\`
  entry per position (what a fresh step writes), ${WRITES} timed writes after 20 untimed ones, awaited one at a time:
  on PGlite in the data directory \`spool run\` just used (\`openPgliteStore(dir)\`, the default store of
  \`spool run\`), on in-memory PGlite (\`openPgliteStore()\`), and on a throwaway PostgreSQL server started by
  \`test/support/postgres.ts\`'s \`startPostgres()\` (transpiled in memory; no loader needed) through
  \`openPostgresStore(url)\`: once as the tests configure it (fsync, synchronous_commit and full_page_writes off) and
  once after \`ALTER SYSTEM\` turns all three on (a durable commit per write, like a production server).
- Ratios divide a median by the median of \`/bin/true\` (the cheapest external command bash can run) or of
  \`node -e 0\` (the floor for anything written in Node), both from the same loop where it has them (the PGlite
  \`spool run\` has both, the PostgreSQL one only \`/bin/true\`; the others use the start-up loop's). The builtin
  \`true\` costs microseconds, so a ratio to it would say nothing; its rows show what the timing loop itself costs.

## Results

${table()}
${notes.length ? `\nNotes:\n\n${notes.map((note) => `- ${note}`).join('\n')}\n` : ''}
## Interpretation

${interpretation()}
`;
  // The cluster section is `npm run bench:cluster`'s (bench/cluster/), and what follows it notes
  // changes measured with it: keep both as they are.
  const previous = existsSync(DOC) ? readFileSync(DOC, 'utf8') : '';
  const cluster = /<!-- cluster-bench:begin -->[\s\S]*$/.exec(previous)?.[0].trimEnd();
  writeFileSync(DOC, `${(await formatMarkdown(doc)).trimEnd()}\n${cluster ? `\n${cluster}\n` : ''}`);
}

// ---------------------------------------------------------------------------------------------

async function main() {
  log(`scratch directory ${scratch}`);
  const wall = [];
  await benchStartup();

  const dataDir = join(scratch, 'pglite-data');
  const pgliteWall = await benchSteps('pglite', 'PGlite data dir', STEPS, ['--data-dir', dataDir], true);
  wall.push(`PGlite spool run ${(pgliteWall / 1000).toFixed(1)} s incl. first open of a fresh data dir`);

  const { openPgliteStore } = await import(pathToFileURL(join(TREE, 'dist/store/pglite.js')).href);
  const { openPostgresStore } = await import(pathToFileURL(join(TREE, 'dist/store/postgres.js')).href);
  {
    log(`journal: ${WRITES} appendJournal on PGlite (data dir)`);
    const store = await openPgliteStore(dataDir);
    try {
      await benchJournal('pglite_disk', 'PGlite, data directory (as `spool run`)', store, WRITES);
    } finally {
      await store.close();
    }
  }
  {
    log(`journal: ${WRITES} appendJournal on PGlite (in memory)`);
    const store = await openPgliteStore();
    try {
      await benchJournal('pglite_mem', 'PGlite, in memory', store, WRITES);
    } finally {
      await store.close();
    }
  }

  let server = null;
  try {
    const { startPostgres } = await loadTestPostgres(ROOT);
    log('starting a throwaway PostgreSQL server (test/support/postgres.ts)');
    const t0 = Date.now();
    server = await startPostgres();
    wall.push(`PostgreSQL start ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  } catch (error) {
    const reason = String(error?.message ?? error).split('\n')[0];
    notes.push(`PostgreSQL was not measured: ${reason}. Only PGlite rows are real-store numbers.`);
    log(`no PostgreSQL: ${reason}`);
  }
  if (server) {
    try {
      log(`journal: ${WRITES} appendJournal on PostgreSQL (test config)`);
      let store = await openPostgresStore(server.url);
      try {
        await benchJournal('pg', 'PostgreSQL, test config (fsync off)', store, WRITES);
      } finally {
        await store.close();
      }
      const pgWall = await benchSteps('pg', 'PostgreSQL, test config', PG_STEPS, ['--database-url', server.url], false);
      wall.push(`PostgreSQL spool run ${(pgWall / 1000).toFixed(1)} s`);

      // The test server trades durability for speed; turn it back on for a production-like commit.
      for (const setting of ['fsync', 'synchronous_commit', 'full_page_writes']) {
        await pgQuery(server.url, `alter system set ${setting} = on`);
      }
      await pgQuery(server.url, 'select pg_reload_conf()');
      await new Promise((resolveWait) => setTimeout(resolveWait, 500)); // the reload is asynchronous
      const [now] = await pgQuery(
        server.url,
        "select current_setting('fsync') as fsync, current_setting('synchronous_commit') as sync",
      );
      if (now.fsync !== 'on' || now.sync !== 'on') {
        notes.push(`the durable PostgreSQL row ran with fsync=${now.fsync}, synchronous_commit=${now.sync}`);
      }
      log(`journal: ${WRITES} appendJournal on PostgreSQL (fsync + synchronous_commit on)`);
      store = await openPostgresStore(server.url);
      try {
        await benchJournal('pg_durable', 'PostgreSQL, fsync + synchronous_commit on', store, WRITES);
      } finally {
        await store.close();
      }
    } finally {
      await server.stop();
    }
  }

  const totalSeconds = (Date.now() - started) / 1000;
  process.stdout.write(`\n${consoleTable()}\n\n`);
  for (const note of notes) process.stdout.write(`note: ${note}\n`);
  const info = machine();
  process.stdout.write(
    `machine: nproc=${info.nproc}, ${info.cpu}, node ${info.node}; whole bench ${totalSeconds.toFixed(0)} s\n`,
  );
  if (WRITE_DOC) {
    await writeDoc(info, wall.join('; '), totalSeconds);
    process.stdout.write(`wrote ${DOC}\n`);
  }
}

try {
  await main();
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
