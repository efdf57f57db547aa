// The recipes of the durable-patterns page on a real cluster, as users get them: `examples/` is a
// kustomization (each recipe's script or pipeline in one generated ConfigMap, its Workflow, Handler
// or Schedule beside it), and each test applies that kustomization's objects for its recipe into a
// namespace of its own, then checks the runs' output against the seed's lines. The recipes are
// independent, so they run at once (describe.concurrent): the suite takes about as long as its
// slowest recipe. Durations the seed gives in days or minutes are shortened through what the
// recipe reads (TRIAL_LENGTH) or the Schedule's cadence, never a second copy of the script.
//
//   npm run test:e2e -- test/e2e/recipes.e2e.ts
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GaveUp, eventually as pollUntil } from '../support/eventually.js';
import { deployHyperspool, E2E_LABEL, openCluster, repo, sh, SYSTEM, type Cluster, type KubeObject } from './support/cluster.js';

interface RunResource {
  metadata: { name: string; creationTimestamp?: string; labels?: Record<string, string> };
  spec: { workflowRef: { name: string }; input?: unknown };
  status?: { runId?: string; phase?: string; awaiting?: string; passes?: number; message?: string; startedAt?: string };
}

type Manifest = KubeObject & { kind: string; metadata: { name: string; labels?: Record<string, string> }; spec?: Record<string, unknown> };

/** One recipe's namespace: its objects applied, a person's kubeconfig, and what the tests ask of it. */
interface Recipe {
  namespace: string;
  spool(...args: string[]): Promise<string>;
  run(name: string): Promise<RunResource>;
  runs(workflow: string): Promise<RunResource[]>;
  startRun(name: string, workflow: string, input?: unknown): Promise<void>;
  /** Waits for the run to end and answers it; `phase` is the end it must reach. */
  whenEnded(name: string, phase?: 'Succeeded' | 'Failed' | 'Cancelled', timeoutMs?: number): Promise<RunResource>;
  emit(type: string, id: string, ...args: string[]): Promise<string[]>;
}

/** Polls once a second: ten recipes wait at once, and each probe of some runs kubectl or spool. */
const eventually = <T>(what: string, probe: () => Promise<T | false | 0 | '' | null | undefined>, timeoutMs = 60_000): Promise<T> =>
  pollUntil(what, probe, timeoutMs, 1000);

const lines = (text: string): string[] => text.split('\n').filter(Boolean);

/** An activity slow enough to lose its pod mid-command (the lost-pod test). */
const SLOW_PROBE = `spool activity run slow --requires shell -- sh -c 'sleep 20; echo "slept in attempt $SPOOL_ATTEMPT"'\n`;
const seconds = (clock: string): number => {
  const [h = 0, m = 0, s = 0] = clock.split(':').map(Number);
  return h * 3600 + m * 60 + s;
};

// Ten minutes a test: on a busy node a pass's pod can take a minute to start.
describe.concurrent('the durable-patterns recipes on a real cluster (examples/)', { timeout: 600_000 }, () => {
  const runLabel = `e2e-${Date.now().toString(36)}`;
  let cluster: Cluster;
  /** Every object of `kubectl kustomize examples`, with the generated ConfigMap. */
  let examples: Manifest[] = [];

  beforeAll(async () => {
    cluster = await openCluster(runLabel);
    await deployHyperspool(cluster);
    const built = await cluster.kubectl('kustomize', join(repo, 'examples'));
    examples = parseAllDocuments(built).map((doc) => doc.toJS() as Manifest);
  });

  afterAll(async () => {
    if (!cluster) return;
    if (!process.env.HYPERSPOOL_E2E_KEEP) {
      const namespaces = await cluster.kubectl('get', 'namespaces', '-l', `${E2E_LABEL}=${runLabel}`, '-o', 'name').catch(() => '');
      for (const namespace of lines(namespaces)) await cluster.kubectl('delete', namespace, '--wait=false').catch(() => undefined);
      await cluster.kubectl('-n', SYSTEM, 'delete', 'rolebinding', '-l', `${E2E_LABEL}=${runLabel}`).catch(() => undefined);
    }
    await cluster.close();
  });

  /**
   * Every Run of this file's namespaces, read with one kubectl at most every 2 s however many
   * tests wait at once: a kubectl per test per poll would load the node's two cores more than the
   * recipes do, and slow the timings they check.
   */
  let snapshot: { at: number; runs: Promise<RunResource[]> } | null = null;
  const allRuns = (): Promise<RunResource[]> => {
    if (!snapshot || Date.now() - snapshot.at > 2000) {
      const runs = cluster.getJson<{ items: (RunResource & { metadata: { namespace?: string } })[] }>('runs', '-A').then((list) =>
        list.items.filter((run) => run.metadata.namespace?.startsWith(`${runLabel}-`)),
      );
      snapshot = { at: Date.now(), runs: runs.catch(() => (snapshot = null, [])) };
    }
    return snapshot.runs;
  };

  /**
   * The recipe's objects from examples/ (those labelled hyperspool.dev/recipe=<name>, and the
   * ConfigMap of scripts) applied in a namespace of its own; `change` adjusts a copy of an object
   * before it is applied (a shorter duration), never the script.
   */
  async function givenRecipe(name: string, change: (object: Manifest) => void = () => undefined, as = name): Promise<Recipe> {
    const namespace = `${runLabel}-${as}`;
    await cluster.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    await eventually('the default ServiceAccount', () => cluster.kubectl('-n', namespace, 'get', 'serviceaccount', 'default'));
    const userConfig = await cluster.givenPerson(namespace, 'person', 'hyperspool-edit');
    const objects = examples
      .filter((object) => object.kind === 'ConfigMap' || object.metadata.labels?.['hyperspool.dev/recipe'] === name)
      .map((object) => structuredClone(object));
    expect(objects.filter((object) => object.kind === 'Workflow').length).toBeGreaterThan(0);
    for (const object of objects) {
      object.metadata = { ...object.metadata, namespace };
      change(object);
    }
    // Workflows first: a Handler or Schedule whose Workflow is not there yet is not Ready.
    await cluster.apply(...objects.filter((object) => object.kind !== 'Handler' && object.kind !== 'Schedule'));
    const triggers = objects.filter((object) => object.kind === 'Handler' || object.kind === 'Schedule');
    if (triggers.length) await cluster.apply(...triggers);
    for (const trigger of triggers)
      await eventually(`${trigger.kind} ${trigger.metadata.name} Ready`, async () =>
        (await cluster.kubectl('-n', namespace, 'get', trigger.kind.toLowerCase(), trigger.metadata.name, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')) === 'True',
      );

    const spool = (...args: string[]): Promise<string> => sh(process.execPath, [join(repo, 'bin', 'spool'), ...args, '--kubeconfig', userConfig, '-n', namespace]);
    const inNamespace = async (): Promise<RunResource[]> => (await allRuns()).filter((each) => (each.metadata as { namespace?: string }).namespace === namespace);
    const run = async (runName: string): Promise<RunResource> => {
      const found = (await inNamespace()).find((each) => each.metadata.name === runName);
      return found ?? { metadata: { name: runName }, spec: { workflowRef: { name: '' } } };
    };
    const runs = async (workflow: string): Promise<RunResource[]> =>
      (await inNamespace())
        .filter((each) => each.spec.workflowRef.name === workflow)
        .sort((a, b) => (a.status?.startedAt ?? '').localeCompare(b.status?.startedAt ?? ''));
    return {
      namespace,
      spool,
      run,
      runs,
      startRun: (runName, workflow, input) =>
        cluster.apply({ apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Run', metadata: { name: runName, namespace }, spec: { workflowRef: { name: workflow }, ...(input === undefined ? {} : { input }) } }),
      whenEnded: (runName, phase = 'Succeeded', timeoutMs = 360_000) =>
        eventually(
          `${runName} ${phase}`,
          async () => {
            const resource = await run(runName);
            const ended = ['Succeeded', 'Failed', 'Cancelled'].includes(resource.status?.phase ?? '');
            if (ended && resource.status?.phase !== phase)
              throw new GaveUp(`${runName} ended ${resource.status?.phase}: ${resource.status?.message}\n${await spool('logs', runName).catch(() => '')}\n${await cluster.operatorLogs()}`);
            return ended && resource;
          },
          timeoutMs,
        ),
      // Each event has an id, so an emit retried after a dropped connection (the node is busy,
      // an operator replica restarts) is the same event, never a second one.
      emit: async (type, id, ...args) => {
        for (let attempt = 1; ; attempt++) {
          try {
            return (JSON.parse(await spool('event', 'emit', type, '--id', id, ...args, '--json')) as { runs: string[] }).runs;
          } catch (error) {
            if (attempt >= 3) throw error;
            await new Promise((resolve) => setTimeout(resolve, 2000));
          }
        }
      },
    };
  }

  /** The Run resource of a run id an event started (its key is the id's last part). */
  const runNamed = async (recipe: Recipe, workflow: string, runId: string): Promise<string> => {
    const key = runId.slice(runId.lastIndexOf(':') + 1);
    return eventually(`the Run of ${runId}`, async () => (await recipe.runs(workflow)).find((each) => each.metadata.labels?.['hyperspool.dev/run'] === key)?.metadata.name);
  };

  it("saga: the car booking fails, the hotel and the flight are cancelled newest first, and the Run ends Failed", async () => {
    const saga = await givenRecipe('saga');
    await saga.startRun('saga-1', 'saga');
    const failed = await saga.whenEnded('saga-1', 'Failed');
    expect(failed.status?.message).toBe("script exited 1 (step 'book-car' exited 1: no cars left)");
    // The pass Job is named after the Run: no label to look up first.
    const log = await eventually('the saga pod log', () => cluster.kubectl('-n', saga.namespace, 'logs', 'job/saga-1-p1', '-c', 'script'));
    expect(lines(log)).toEqual(['no cars left', 'cancelled HT-2207', 'cancelled FL-881']);
  });

  it('trial deadline: the upgrade for cust-1 ends its wait, cust-2 waits out its trial (TRIAL_LENGTH=20s) and is downgraded', async () => {
    const trial = await givenRecipe('trial', (object) => {
      if (object.kind === 'Workflow') object.spec = { ...object.spec, env: [{ name: 'TRIAL_LENGTH', value: '20s' }] };
    });
    const [one] = await trial.emit('trial.started', 'trial-1', '--key', 'cust-1', '--payload', '{"customer":"cust-1"}');
    const [two] = await trial.emit('trial.started', 'trial-2', '--key', 'cust-2', '--payload', '{"customer":"cust-2"}');
    const names = await Promise.all([runNamed(trial, 'trial', one ?? ''), runNamed(trial, 'trial', two ?? '')]);
    for (const name of names)
      await eventually(`${name} waiting for plan.upgraded`, async () => (await trial.run(name)).status?.awaiting?.startsWith('event plan.upgraded'), 120_000);
    await trial.emit('plan.upgraded', 'upgrade-1', '--key', 'cust-1');
    const [first = '', second = ''] = names;
    await trial.whenEnded(first);
    expect(await trial.spool('logs', first)).toBe('trial started for cust-1\ncust-1 upgraded\n');
    // cust-2 was not woken by cust-1's upgrade (its subject is cust-2): it waits out its own
    // deadline and takes the downgrade branch.
    await trial.whenEnded(second);
    const log = await trial.spool('logs', second);
    expect(lines(log).filter((line) => !line.startsWith('spool: '))).toEqual(['trial started for cust-2', 'trial over for cust-2']);
  });

  it('refund approval: ask approved with spool approve, then only ask and refund run', async () => {
    const refund = await givenRecipe('refund');
    await refund.startRun('refund-1', 'refund');
    await eventually('refund-1 waiting at ask', async () => (await refund.run('refund-1')).status?.awaiting === 'approval ask', 120_000);
    expect(await refund.spool('approve', 'refund-1', 'ask')).toBe('approved ask of refund-1\n');
    await refund.whenEnded('refund-1');
    const log = await refund.spool('logs', 'refund-1');
    expect(log).toContain('refunded order 1042\n');
    expect(log).not.toContain('asking the team lead');
    expect(log).not.toContain('left open');
  });

  it("refund approval, timed out: the run's input shortens the gates; ask unanswered then ask_lead approved refunds, both unanswered gives up", async () => {
    const refund = await givenRecipe('refund', undefined, 'refund-timeouts');
    await Promise.all([
      refund.startRun('refund-lead', 'refund', { ask_timeout: '5s', lead_timeout: '10m' }),
      refund.startRun('refund-nobody', 'refund', { ask_timeout: '5s', lead_timeout: '5s' }),
    ]);
    await eventually('refund-lead waiting at ask_lead', async () => (await refund.run('refund-lead')).status?.awaiting === 'approval ask_lead', 180_000);
    expect(await refund.spool('approve', 'refund-lead', 'ask_lead')).toBe('approved ask_lead of refund-lead\n');
    const [lead, nobody] = await Promise.all(
      ['refund-lead', 'refund-nobody'].map(async (name) => (await refund.whenEnded(name), refund.spool('logs', name))),
    );
    expect(lead).toContain('ask: no answer in time\n');
    expect(lead).toContain('no answer on the refund for order 1042, asking the team lead\n');
    expect(lead).toContain('ask_lead: approved\n');
    expect(lead).toContain('refunded order 1042\n');
    expect(lead).not.toContain('left open');
    expect(nobody).toContain('ask_lead: no answer in time\n');
    expect(nobody).toContain('nobody answered, refund for order 1042 left open\n');
    expect(nobody).not.toContain('refunded order 1042');
  });

  it('handle each event once: two order.placed events for order 1042 start two runs; one charges and ships, the other finds the order handled', async () => {
    const orders = await givenRecipe('orders');
    const first = await orders.emit('order.placed', 'placed-1', '--payload', '{"order":1042}');
    const second = await orders.emit('order.placed', 'placed-2', '--payload', '{"order":1042}');
    expect(new Set([...first, ...second]).size).toBe(2);
    const names = await Promise.all([...first, ...second].map((id) => runNamed(orders, 'on-order', id)));
    const logs = await Promise.all(names.map(async (name) => (await orders.whenEnded(name), orders.spool('logs', name))));
    // The two runs start at once on a cluster, so either may win the claim; exactly one does.
    const winner = logs.find((log) => log.startsWith('charged'));
    expect(winner).toMatch(/^charged order 1042, key spool-[0-9a-f]{32}\nshipped order 1042\n$/);
    expect(logs.filter((log) => log === 'order 1042 already handled\n')).toHaveLength(1);
  });

  it('deploy-prod: two runs submitted together deploy one after the other', async () => {
    const deploy = await givenRecipe('deploy-prod');
    await Promise.all([deploy.startRun('deploy-1', 'deploy-prod'), deploy.startRun('deploy-2', 'deploy-prod')]);
    const clocks = await Promise.all(
      ['deploy-1', 'deploy-2'].map(async (name) => {
        await deploy.whenEnded(name);
        const log = await deploy.spool('logs', name);
        const [, started = '', done = ''] = /^deploy started (\S+)\ndeploy done (\S+)$/m.exec(log) ?? [];
        expect(started, log).not.toBe('');
        return { started: seconds(started), done: seconds(done) };
      }),
    );
    const [a, b] = clocks.sort((x, y) => x.started - y.started) as [{ started: number; done: number }, { started: number; done: number }];
    expect(a.done - a.started).toBeGreaterThanOrEqual(4);
    // The second deploy starts only once the first is done: never two at a time.
    expect(b.started).toBeGreaterThanOrEqual(a.done);
  });

  /** A deploy admitted to its group (it has a run id), then a second one with `policy` from its input. */
  async function deployTwice(as: string, policy: string): Promise<Recipe> {
    const deploy = await givenRecipe('deploy-prod', undefined, as);
    await deploy.startRun('deploy-1', 'deploy-prod');
    await eventually('deploy-1 admitted', async () => (await deploy.run('deploy-1')).status?.runId);
    await deploy.startRun('deploy-2', 'deploy-prod', { policy });
    return deploy;
  }

  it('deploy-prod, policy cancel-running from the input: the newest run replaces the one in progress', async () => {
    const deploy = await deployTwice('deploy-cancel', 'cancel-running');
    const replaced = await deploy.whenEnded('deploy-1', 'Cancelled');
    const newest = (await deploy.run('deploy-2')).status?.runId ?? '';
    expect(replaced.status?.message).toBe(`replaced by ${newest} (concurrency group deploy-prod)`);
    await deploy.whenEnded('deploy-2');
    expect(await deploy.spool('logs', 'deploy-2')).toMatch(/^deploy started \S+\ndeploy done \S+$/m);
  });

  it('deploy-prod, policy skip from the input: a run that arrives while the group is busy is dropped', async () => {
    const deploy = await deployTwice('deploy-skip', 'skip');
    const skipped = await deploy.whenEnded('deploy-2', 'Cancelled');
    expect(skipped.status?.message).toMatch(/^skipped: concurrency group deploy-prod is busy with /);
    await deploy.whenEnded('deploy-1');
    expect(await deploy.spool('logs', 'deploy-1')).toMatch(/^deploy started \S+\ndeploy done \S+$/m);
  });

  it('enrich throttle: three runs for acme are admitted ten seconds apart and none calls before its slot; globex is never queued', async () => {
    const enrich = await givenRecipe('enrich');
    const tenants = ['acme', 'acme', 'acme', 'globex'];
    const names = tenants.map((_, i) => `enrich-${i + 1}`);
    await Promise.all(tenants.map((tenant, i) => enrich.startRun(names[i] ?? '', 'enrich', { tenant })));
    // A queued run says until when (`throttle crm-acme until <time>`) for the ten or twenty
    // seconds it waits; the slots are the throttle's own schedule, which a pod's start time does
    // not blur (the call's clock is the slot plus one pod start or two, which vary by seconds).
    const slots = new Map<string, number>();
    let ended = false;
    const watching = (async () => {
      while (!ended) {
        for (const name of names) {
          const until = /^throttle crm-\S+ until (\S+)$/.exec((await enrich.run(name)).status?.awaiting ?? '')?.[1];
          if (until && !slots.has(name)) slots.set(name, Date.parse(until));
        }
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    })();
    const called = await Promise.all(
      tenants.map(async (tenant, i) => {
        const name = names[i] ?? '';
        const resource = await enrich.whenEnded(name);
        const log = await enrich.spool('logs', name);
        // The job's line among the coordinator's (`  call: started …`, `  call: succeeded`).
        const at = new RegExp(`^called the CRM for ${tenant} at (\\d\\d:\\d\\d:\\d\\d)$`, 'm').exec(log)?.[1];
        expect(at, log).toBeDefined();
        return { name, tenant, at: seconds(at ?? ''), startedAt: Date.parse(resource.status?.startedAt ?? '') };
      }),
    );
    ended = true;
    await watching;
    const acme = called.filter((c) => c.tenant === 'acme');
    const queued = acme.filter((c) => slots.has(c.name));
    // Six a minute is one every ten seconds: the first acme run goes at once, the others wait
    // for slots ten and twenty seconds after it was admitted.
    expect(queued).toHaveLength(2);
    const [first] = acme.filter((c) => !slots.has(c.name));
    const [ten, twenty] = queued.map((c) => slots.get(c.name) ?? 0).sort((x, y) => x - y) as [number, number];
    expect(twenty - ten).toBe(10_000);
    expect(Math.abs(ten - 10_000 - (first?.startedAt ?? 0))).toBeLessThan(3000);
    // None calls the CRM before its slot (the clock in the log has whole seconds).
    for (const c of queued) expect(c.at).toBeGreaterThanOrEqual(seconds(new Date(slots.get(c.name) ?? 0).toISOString().slice(11, 19)));
    // globex has its own budget: never queued, not behind acme's queue.
    expect(slots.has(names[3] ?? '')).toBe(false);
  });

  it('lock per customer: three runs take turns in the locked section, the work outside it does not wait', async () => {
    const lock = await givenRecipe('lock');
    const names = ['lock-1', 'lock-2', 'lock-3'];
    await Promise.all(names.map((name) => lock.startRun(name, 'lock')));
    const sections = await Promise.all(
      names.map(async (name) => {
        await lock.whenEnded(name);
        const log = await lock.spool('logs', name);
        const [, start = '', end = ''] = /^fetched for acme\nstart (\S+)\nend (\S+)\n$/.exec(log) ?? [];
        expect(start, log).not.toBe('');
        return { start: seconds(start), end: seconds(end) };
      }),
    );
    sections.sort((x, y) => x.start - y.start);
    for (const [i, section] of sections.entries()) {
      expect(section.end - section.start).toBeGreaterThanOrEqual(3);
      if (i > 0) expect(section.start).toBeGreaterThanOrEqual(sections[i - 1]?.end ?? 0);
    }
  });

  it('debounce: five customer.updated events half a second apart, and only the run with the last ticket reindexes', async () => {
    const reindex = await givenRecipe('reindex');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(...(await reindex.emit('customer.updated', `updated-${i + 1}`, '--payload', '{"customer":"acme"}')));
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(ids).toHaveLength(5);
    const names = await Promise.all(ids.map((id) => runNamed(reindex, 'reindex', id)));
    const logs = await Promise.all(names.map(async (name) => (await reindex.whenEnded(name), reindex.spool('logs', name))));
    expect(logs.sort()).toEqual(['reindexing acme (ticket 5)\n', 'ticket 1 superseded\n', 'ticket 2 superseded\n', 'ticket 3 superseded\n', 'ticket 4 superseded\n']);
  });

  it('poll on a schedule (every 3s here, 5m in examples/): three ticks process 0..10, 10..20, 20..30 from the cursor', async () => {
    const poll = await givenRecipe('poll', (object) => {
      if (object.kind === 'Schedule') object.spec = { ...object.spec, every: '3s' };
    });
    const ticks = await eventually('three ticks ended', async () => {
      const all = await poll.runs('poll');
      const ended = all.filter((run) => run.status?.phase === 'Succeeded' || run.status?.phase === 'Failed');
      return ended.length >= 3 && ended.slice(0, 3);
    }, 180_000);
    await cluster.kubectl('-n', poll.namespace, 'patch', 'schedule', 'ticket-poll', '--type=merge', '-p', '{"spec":{"suspend":true}}');
    const logs = await Promise.all(ticks.map((tick) => poll.spool('logs', tick.metadata.name)));
    expect(logs).toEqual(['processed tickets 0..10\n', 'processed tickets 10..20\n', 'processed tickets 20..30\n']);
  });

  /** config/activities, once for the file: the ActivityClass offering shell, which the activity recipes require. */
  let activityClasses: Promise<string> | null = null;
  const givenActivityClasses = (): Promise<string> => (activityClasses ??= cluster.kubectl('apply', '-k', join(repo, 'config', 'activities')));
  /** The Jobs of a run's activity attempts, oldest attempt first. */
  const attemptJobs = async (recipe: Recipe, runName: string) => {
    const key = (await recipe.run(runName)).metadata.labels?.['hyperspool.dev/run'] ?? '';
    const jobs = await cluster.getJson<{ items: { metadata: { name: string; creationTimestamp: string; labels: Record<string, string>; annotations?: Record<string, string> } }[] }>(
      'jobs', '-n', recipe.namespace, '-l', `hyperspool.dev/run=${key},hyperspool.dev/activity`,
    );
    return jobs.items.sort((a, b) => Number(a.metadata.labels['hyperspool.dev/attempt']) - Number(b.metadata.labels['hyperspool.dev/attempt']));
  };

  it('fan out with activities: one Job per region, and the waits print each result in the order waited for', async () => {
    await givenActivityClasses();
    const fanOut = await givenRecipe('fan-out');
    await fanOut.startRun('fan-out-1', 'fan-out');
    await fanOut.whenEnded('fan-out-1');
    expect(lines(await fanOut.spool('logs', 'fan-out-1'))).toEqual([
      expect.stringMatching(/^eu-north: \d+ms$/),
      expect.stringMatching(/^us-east: \d+ms$/),
      expect.stringMatching(/^ap-south: \d+ms$/),
    ]);
    const jobs = await attemptJobs(fanOut, 'fan-out-1');
    expect(jobs.map((job) => job.metadata.annotations?.['hyperspool.dev/activity-name']).sort()).toEqual(['probe-ap-south', 'probe-eu-north', 'probe-us-east']);
  });

  it('fan out: an attempt whose pod is deleted mid-command is tried again as a new attempt, and its result is recorded once', async () => {
    await givenActivityClasses();
    const fanOut = await givenRecipe('fan-out', (object) => {
      // Not a recipe of the seed: a slow activity in the fan-out recipe's namespace, to lose a pod of.
      if (object.kind === 'Workflow') Object.assign(object, { metadata: { ...object.metadata, name: 'slow-probe' }, spec: { filename: 'slow.sh', script: SLOW_PROBE } });
    }, 'lost-attempt');
    await fanOut.startRun('slow-1', 'slow-probe');
    const [first] = await eventually('attempt 1 started', async () => {
      const jobs = await attemptJobs(fanOut, 'slow-1');
      const pods = jobs.length ? await cluster.kubectl('-n', fanOut.namespace, 'get', 'pods', '-l', `job-name=${jobs[0]?.metadata.name}`, '-o', 'jsonpath={.items[*].status.phase}') : '';
      return pods === 'Running' && jobs;
    }, 180_000);
    // The run waits for it holding no pod of its own.
    await eventually('slow-1 waiting for the activity', async () => (await fanOut.run('slow-1')).status?.awaiting === 'activity slow');
    const key = (await fanOut.run('slow-1')).metadata.labels?.['hyperspool.dev/run'] ?? '';
    await eventually('no pass pod while it waits', async () => (await cluster.kubectl('-n', fanOut.namespace, 'get', 'pods', '-l', `hyperspool.dev/run=${key},hyperspool.dev/pass`, '-o', 'name')) === '' && (await attemptJobs(fanOut, 'slow-1')).length === 1);
    await cluster.kubectl('-n', fanOut.namespace, 'delete', 'pods', '-l', `job-name=${first?.metadata.name}`, '--wait=false');
    await fanOut.whenEnded('slow-1');
    expect(await fanOut.spool('logs', 'slow-1')).toBe('slept in attempt 2\n');
    expect((await attemptJobs(fanOut, 'slow-1')).map((job) => job.metadata.labels['hyperspool.dev/attempt'])).toEqual(['1', '2']);
    const journal = JSON.parse(await fanOut.spool('journal', 'slow-1', '--json')) as { verb: string; kind: string; data: unknown }[];
    expect(journal.filter((entry) => entry.verb === 'activity.run' && entry.kind === 'result').map((entry) => entry.data)).toEqual([{ stdout: 'slept in attempt 2\n', exitCode: 0, attempts: 2 }]);
  });

  it('retry with backoff: fetch-rates (its placeholder URL never answers) is tried five times, a Job each, the waits doubling 2s, 4s, 8s, 16s, and the run fails with the last exit', async () => {
    await givenActivityClasses();
    const retry = await givenRecipe('retry');
    await retry.startRun('retry-1', 'retry');
    const done = await retry.whenEnded('retry-1', 'Failed');
    expect(await retry.spool('logs', 'retry-1')).toContain('spool: activity fetch-rates failed with exit 75 after 5 attempts');
    expect(done.status?.message).toMatch(/^script exited 75/);
    const jobs = await attemptJobs(retry, 'retry-1');
    expect(jobs.map((job) => job.metadata.labels['hyperspool.dev/attempt'])).toEqual(['1', '2', '3', '4', '5']);
    // Each attempt's Job is made once its wait is over (whole seconds: a gap is at least its wait).
    const at = jobs.map((job) => Date.parse(job.metadata.creationTimestamp) / 1000);
    for (const [i, wait] of [2, 4, 8, 16].entries()) expect(at[i + 1]! - at[i]!, `the wait before attempt ${i + 2}`).toBeGreaterThanOrEqual(wait);
  });

  it('release.mjs: node calls spool as a subprocess; the version is recorded before the sleep and deployed after it', async () => {
    const release = await givenRecipe('release');
    await release.startRun('release-1', 'release');
    const done = await release.whenEnded('release-1');
    expect(done.status?.passes).toBe(2);
    // The deploy step's output is its result, which node reads (execFileSync): the log is the last line.
    const log = await release.spool('logs', 'release-1');
    const [, y, mo, d, h, mi, sec] = /^released (\d{4})(\d\d)(\d\d)\.(\d\d)(\d\d)(\d\d)\n$/.exec(log) ?? [];
    expect(y, log).toBeDefined();
    // The version is pass 1's, recorded before the 2 s sleep, not read again by pass 2.
    const version = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(sec));
    expect(Date.parse((done.status as { finishedAt?: string }).finishedAt ?? '') - version).toBeGreaterThanOrEqual(2000);
  });
});
