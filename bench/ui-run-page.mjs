#!/usr/bin/env node
/**
 * The run page of a run with 1,000 journal entries (500 durable calls, each a call and a result)
 * and a 500-line log, in headless Chromium (Debian's, driven by playwright-core) against a real
 * `spool dev`: time to first render (the run's heading and summary on screen), time to interactive
 * (timeline and log rendered, and the main thread free to take a click), and the bytes transferred,
 * each load in a fresh browser context (cold cache). Then the runs list's first render with 10
 * runs and with 10,000.
 *
 *   npm run bench:ui                 # build first; rewrites its section of docs/benchmarks.md
 *   node bench/ui-run-page.mjs --no-write
 *
 * BENCH_UI_LOADS (default 7) loads of each page; the medians are reported.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { median } from './lib/stats.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DOC = join(ROOT, 'docs', 'benchmarks.md');
const BEGIN = '<!-- ui-bench:begin -->';
const END = '<!-- ui-bench:end -->';
const LOADS = Number.parseInt(process.env.BENCH_UI_LOADS ?? '', 10) || 7;
const CALLS = 500;
const write = !process.argv.includes('--no-write');
const started = Date.now();
const log = (line) => process.stderr.write(`[bench:ui ${((Date.now() - started) / 1000).toFixed(0).padStart(3)}s] ${line}\n`);

const { startDevServer } = await import(join(ROOT, 'dist', 'dev', 'dev-server.js'));
const { chromiumPath } = await import(join(ROOT, 'bench', 'lib', 'chromium.mjs'));
const built = JSON.parse(readFileSync(join(ROOT, 'dist', 'ui', 'build.json'), 'utf8'));

const dataDir = mkdtempSync(join(tmpdir(), 'spool-ui-bench-'));
const dev = await startDevServer({ port: 0, dataDir: join(dataDir, 'data'), pollMs: 1000 });
const { store } = dev;

/** A finished run of 500 steps written straight into the store, as a pass would have recorded it. */
async function bigRun() {
  const id = 'dev:default:run-bench00000001000';
  await store.createRun({ id, project: 'default', workflow: 'deploy-500.sh', interpreter: 'bash -eu', script: 'true', input: { release: '2026.12.03' } });
  await store.startPass(id);
  for (let i = 0; i < CALLS; i += 1) {
    const name = `step-${String(i).padStart(3, '0')}`;
    const entry = { runId: id, position: i, verb: 'step', name, occurrence: 1 };
    await store.appendJournal({ ...entry, kind: 'call', data: { label: `host-${i % 20}` } });
    const failed = i === CALLS - 1;
    await store.appendJournal({ ...entry, kind: 'result', data: { stdout: `deployed ${name} to host-${i % 20} in ${(i % 7) + 1}s\n`, exitCode: failed ? 2 : 0 } });
    await store.appendLog(id, 1, `deployed ${name} to host-${i % 20}\n`);
  }
  await store.updateRun(id, { status: 'failed', error: 'script exited 2', finishedAt: new Date() });
  return id;
}

async function manyRuns(count, from) {
  await store.transaction(async (tx) => {
    for (let i = from; i < from + count; i += 1) {
      const id = `dev:default:run-list${String(i).padStart(12, '0')}`;
      await tx.createRun({ id, project: 'default', workflow: `wf-${i % 25}.sh`, interpreter: 'bash -eu', script: 'true' });
      // Ended already: the server must not run ten thousand passes while the page is measured.
      await tx.updateRun(id, { status: i % 10 === 3 ? 'failed' : 'succeeded', finishedAt: new Date() });
    }
  });
}

const browser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox', '--disable-dev-shm-usage'] });

/** One cold load of `path`: ms to the page's first render mark, ms to interactive, bytes on the wire. */
async function load(path, firstMark, readyMarks) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  await cdp.send('Performance.enable');
  let bytes = 0;
  cdp.on('Network.loadingFinished', (event) => (bytes += event.encodedDataLength));
  await page.goto(`${dev.url}${path}`);
  await page.waitForFunction((marks) => marks.every((mark) => performance.getEntriesByName(mark).length > 0), [firstMark, ...readyMarks], { polling: 'raf', timeout: 60_000 });
  const times = await page.evaluate(
    ([first, ready]) =>
      new Promise((resolveTimes) => {
        const at = (mark) => performance.getEntriesByName(mark)[0].startTime;
        const renderedAt = Math.max(...ready.map(at));
        // Free to take a click: a task queued after the last render runs.
        setTimeout(() => resolveTimes({ first: at(first), interactive: Math.max(renderedAt, performance.now()) }), 0);
      }).then(async (times) => {
        // The whole timeline: its lines below the fold are drawn in slices after the first screen.
        if (!ready.includes('spool:timeline-rendered')) return { ...times, complete: times.interactive };
        for (;;) {
          const done = performance.getEntriesByName('spool:timeline-complete')[0];
          if (done) return { ...times, complete: done.startTime };
          await new Promise((resolveFrame) => setTimeout(resolveFrame, 10));
        }
      }),
    [firstMark, readyMarks],
  );
  // The page's own work on its main thread (scripts, style, layout, paint), in CPU seconds: what the
  // load of other processes on the machine stretches in wall-clock time, it does not change.
  const { metrics } = await cdp.send('Performance.getMetrics');
  const work = (metrics.find((metric) => metric.name === 'TaskDuration')?.value ?? 0) * 1000;
  // Polling requests after the page settled are not part of the load.
  await context.close();
  return { ...times, bytes, work };
}

async function measure(path, firstMark, readyMarks) {
  await load(path, firstMark, readyMarks); // warm the server (JIT, store caches), not the browser
  const loads = [];
  for (let i = 0; i < LOADS; i += 1) loads.push(await load(path, firstMark, readyMarks));
  return {
    first: median(loads.map((one) => one.first)),
    interactive: median(loads.map((one) => one.interactive)),
    complete: median(loads.map((one) => one.complete)),
    work: median(loads.map((one) => one.work)),
    bytes: median(loads.map((one) => one.bytes)),
  };
}

log('writing a run of 1,000 journal entries');
const id = await bigRun();
const runPath = `/runs/${encodeURIComponent(id)}`;
log(`loading its page ${LOADS + 1} times`);
const run = await measure(runPath, 'spool:run-rendered', ['spool:run-rendered', 'spool:timeline-rendered', 'spool:log-rendered']);
const timeline = await (await fetch(`${dev.url}/v1${runPath}/timeline`, { headers: { 'Accept-Encoding': 'identity' } })).text();

await manyRuns(9, 0);
log('the runs list with 10 runs');
const ten = await measure('/runs', 'spool:runs-rendered', ['spool:runs-rendered']);
log('writing 9,990 more runs');
await manyRuns(9_990, 9);
log('the runs list with 10,000 runs');
const tenThousand = await measure('/runs', 'spool:runs-rendered', ['spool:runs-rendered']);

await browser.close();
await dev.close();
rmSync(dataDir, { recursive: true, force: true });

const kb = (bytes) => `${(bytes / 1024).toFixed(0)} KB`;
const ms = (value) => `${Math.round(value)} ms`;
const assets = Object.entries(built.sizes).map(([name, size]) => `\`${name}\` ${kb(size.bytes)} (${kb(size.gzip)} gzip)`).join(', ');
const load1 = loadavg().map((value) => value.toFixed(2)).join(' ');
const section = `${BEGIN}
## The run page in a browser

\`npm run bench:ui\` (\`bench/ui-run-page.mjs\`), ${new Date().toISOString().slice(0, 10)}, 2 cores, load ${load1} at the end. Headless Chromium (Debian's) against \`spool dev\` (PGlite), each load in a fresh browser context with the cache off; medians of ${LOADS} loads after one to warm the server. *First render*: the run's heading and summary are on screen; *interactive*: the first screen of its timeline and its log are rendered too and the main thread is free to take a click (a task queued after the last render runs); *all drawn*: the last of the 500 timeline lines is drawn (they come in slices of 120, each its own task, so the page takes clicks meanwhile); *main-thread work*: the CPU time of the page's own tasks until then (Chrome's TaskDuration), which other processes' load does not stretch; *bytes*: everything transferred (page, script, stylesheet, API answers), compressed where the server compresses.

| page | first render | interactive | all drawn | page's main-thread work | bytes transferred |
| --- | --- | --- | --- | --- | --- |
| a run of ${(CALLS * 2).toLocaleString('en')} journal entries (${CALLS} calls) and a ${CALLS}-line log | ${ms(run.first)} | ${ms(run.interactive)} | ${ms(run.complete)} | ${ms(run.work)} | ${kb(run.bytes)} |
| the runs list, 10 runs in the project | ${ms(ten.first)} | ${ms(ten.interactive)} | ${ms(ten.complete)} | ${ms(ten.work)} | ${kb(ten.bytes)} |
| the runs list, 10,000 runs in the project | ${ms(tenThousand.first)} | ${ms(tenThousand.interactive)} | ${ms(tenThousand.complete)} | ${ms(tenThousand.work)} | ${kb(tenThousand.bytes)} |

The goal is under 1 s and under 500 KB for the run page. The bundle: ${assets}; the run's timeline answer is ${kb(timeline.length)} of JSON before compression. The runs list reads one page of 50 (keyset paging on \`(created_at, id)\`), so 10,000 runs cost what 10 do.
${END}`;

console.log(section);
if (write) {
  const doc = readFileSync(DOC, 'utf8');
  const next = doc.includes(BEGIN) ? doc.replace(new RegExp(`${BEGIN}[\\s\\S]*?${END}`), section) : `${doc.trimEnd()}\n\n${section}\n`;
  writeFileSync(DOC, next);
  log(`wrote ${DOC}`);
}
