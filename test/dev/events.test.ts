import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, cliOk, finalLog, listRuns, startDev, waitForRun } from '../support/dev.js';
import { removeTempDirs, tempDir, writeFiles } from '../support/spool.js';

/**
 * The event recipes of the durable-patterns document (a deadline an event cuts short, handle each
 * event once, debounce a burst), on one `spool dev` server, driven with the real CLI.
 */

const READ_CUSTOMER = `python3 -c 'import json, os; print(json.load(open(os.environ["SPOOL_INPUT_FILE"]))["payload"]["customer"])'`;
const READ_ORDER = `python3 -c 'import json, os; print(json.load(open(os.environ["SPOOL_INPUT_FILE"]))["payload"]["order"])'`;

let dev: Awaited<ReturnType<typeof startDev>>;

beforeAll(async () => {
  dev = await startDev();
}, 60_000);

afterAll(async () => {
  await dev?.close();
  removeTempDirs();
});

interface Emitted {
  event: { id: string };
  runs: string[];
}

async function emit(dir: string, type: string, ...extra: string[]): Promise<Emitted> {
  return JSON.parse(await cliOk(dev.url, dir, ['event', 'emit', type, ...extra, '--json'])) as Emitted;
}

describe('a deadline that an event can cut short', () => {
  it('given two trials, when cust-1 upgrades, then cust-1 is thanked and cust-2 times out and is downgraded', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'trial.sh': `customer="$(${READ_CUSTOMER})"
spool step welcome -- echo "trial started for $customer"

if spool wait event plan.upgraded --timeout 15s > /dev/null; then
  spool step thank -- echo "$customer upgraded"
else
  spool step downgrade -- echo "trial over for $customer"
fi
`,
    });
    await cliOk(dev.url, dir, ['handler', 'set', 'trials', './trial.sh', '--on', 'trial.started']);
    const [one] = (await emit(dir, 'trial.started', '--key', 'cust-1', '--payload', '{"customer":"cust-1"}')).runs;
    const [two] = (await emit(dir, 'trial.started', '--key', 'cust-2', '--payload', '{"customer":"cust-2"}')).runs;
    if (!one || !two) throw new Error('a trial.started event started no run');

    // An event that fires before the wait begins is not seen: upgrade only once cust-1 waits. The
    // wait is long enough for the CLI's emit to land within it on a loaded machine (4s did not).
    const waiting = await waitForRun(dev.url, one, ['waiting']);
    expect(waiting.awaiting).toBe('event plan.upgraded cust-1');
    expect(waiting.subject).toBe('cust-1');
    expect(waiting.handler).toBe('trials');
    await emit(dir, 'plan.upgraded', '--key', 'cust-1');

    const first = await finalLog(dev.url, one);
    expect((await waitForRun(dev.url, one)).status).toBe('succeeded');
    expect(first).toContain('trial started for cust-1');
    expect(first).toContain('cust-1 upgraded');
    expect(first).not.toContain('trial over');
    expect(first).not.toContain('timed out');

    // cust-2's wait takes only cust-2's events (or ones with no subject), so it runs out.
    expect((await waitForRun(dev.url, two)).status).toBe('succeeded');
    const second = await cliOk(dev.url, dir, ['logs', two]);
    expect(second).toContain('trial started for cust-2');
    expect(second).toContain('trial over for cust-2');
    expect(second).toContain('spool: wait event plan.upgraded timed out after 15s');
    expect(second).not.toContain('upgraded\n');
  }, 60_000);
});

describe('handle each event once', () => {
  const ON_ORDER = `order="$(${READ_ORDER})"

rc=0
spool state add "order-$order" --entity orders || rc=$?
case $rc in
  0) ;;
  3) echo "order $order already handled"; exit 0 ;;
  *) exit 1 ;;   # couldn't reach the server: fail, don't skip
esac

spool step charge -- sh -c 'echo "charged order $1, key $SPOOL_IDEMPOTENCY_KEY"' _ "$order"
spool step ship -- echo "shipped order $order"
`;

  it('given two events about order 1042, then one run charges and ships it and the other finds it already handled', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'on-order.sh': ON_ORDER });
    await cliOk(dev.url, dir, ['handler', 'set', 'orders', './on-order.sh', '--on', 'order.placed']);
    const [a] = (await emit(dir, 'order.placed', '--payload', '{"order":1042}')).runs;
    const [b] = (await emit(dir, 'order.placed', '--payload', '{"order":1042}')).runs;
    if (!a || !b) throw new Error('an order.placed event started no run');
    expect(a).not.toBe(b); // two events, two runs

    const logs = [await finalLog(dev.url, a), await finalLog(dev.url, b)];
    for (const id of [a, b]) expect((await waitForRun(dev.url, id)).status).toBe('succeeded');
    const winners = logs.filter((log) => log.includes('charged'));
    const losers = logs.filter((log) => log.includes('already handled'));
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(1);
    expect(winners[0]).toMatch(/^charged order 1042, key spool-[0-9a-f]{32}$/m);
    expect(winners[0]).toContain('shipped order 1042');
    expect(losers[0]).toBe('order 1042 already handled\n');
  }, 60_000);

  it('given the same event id emitted twice, then both answers name one run and the handler has one run', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'on-order.sh': ON_ORDER });
    await cliOk(dev.url, dir, ['handler', 'set', 'orders-by-id', './on-order.sh', '--on', 'order.placed-by-id']);
    const first = await emit(dir, 'order.placed-by-id', '--id', 'same', '--payload', '{"order":2077}');
    const second = await emit(dir, 'order.placed-by-id', '--id', 'same', '--payload', '{"order":2077}');
    expect(first.event.id).toBe('same');
    expect(first.runs).toHaveLength(1);
    expect(second.runs).toEqual(first.runs);

    const id = first.runs[0] ?? '';
    const log = await finalLog(dev.url, id);
    expect(log).toContain('charged order 2077');
    expect(log).toContain('shipped order 2077');
    expect(log).not.toContain('already handled');
    const runs = (await listRuns(dev.url)).filter((run) => run.handler === 'orders-by-id');
    expect(runs.map((run) => run.id)).toEqual([id]);
    // and the plain-text answer names the same run
    const again = await cli(dev.url, dir, [
      'event',
      'emit',
      'order.placed-by-id',
      '--id',
      'same',
      '--payload',
      '{"order":2077}',
    ]);
    expect(again.code).toBe(0);
    expect(again.output.trim()).toBe(`same started ${id}`);
  }, 60_000);
});

describe('debounce a burst of events', () => {
  it('given five updates 300ms apart inside a 2s window, then only the run holding the last ticket reindexes', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'reindex.sh': `customer="$(${READ_CUSTOMER})"

# incr is recorded, so this run keeps its ticket across the sleep.
mine="$(spool state incr "ticket:$customer" --entity reindex --op ticket)"

spool sleep 2s   # the quiet window

# A live read: it sees tickets drawn by later arrivals.
if [ "$mine" = "$(spool state get "ticket:$customer" --entity reindex)" ]; then
  spool step reindex -- echo "reindexing $customer (ticket $mine)"
else
  echo "ticket $mine superseded"
fi
`,
    });
    await cliOk(dev.url, dir, ['handler', 'set', 'reindex', './reindex.sh', '--on', 'customer.updated']);
    // One emit every 300ms, each without waiting for the one before to answer.
    const emitted = await Promise.all(
      [0, 1, 2, 3, 4].map(async (i) => {
        await new Promise((resolve) => setTimeout(resolve, i * 300));
        return emit(dir, 'customer.updated', '--payload', '{"customer":"acme"}');
      }),
    );
    const ids = emitted.flatMap((answer) => answer.runs);
    expect(new Set(ids).size).toBe(5);

    const logs = await Promise.all(ids.map((id) => finalLog(dev.url, id)));
    const runs = await Promise.all(ids.map((id) => waitForRun(dev.url, id)));
    expect(
      runs.map((run) => [run.status, run.error]),
      logs.join('----\n'),
    ).toEqual(ids.map(() => ['succeeded', null]));
    expect(logs.filter((log) => log.includes('reindexing'))).toEqual(['reindexing acme (ticket 5)\n']);
    expect(logs.filter((log) => !log.includes('reindexing')).sort()).toEqual(
      [1, 2, 3, 4].map((ticket) => `ticket ${ticket} superseded\n`),
    );
    // Every run slept through its window: one pass to the sleep, one after it.
    for (const id of ids) expect((await waitForRun(dev.url, id)).passes).toBe(2);
  }, 60_000);
});
