import { PatchStrategy, setHeaderOptions, type V1Job } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Operator } from '../../src/operator/operator.js';
import {
  TEST_LABEL,
  eventually,
  getRun,
  givenPodOf,
  givenWorkflow,
  jobsOf,
  startActivityPod,
  startCluster,
  startPod,
  whenRunCreated,
  type Cluster,
} from './support/cluster.js';

/**
 * Activities on a cluster: each attempt is a Job of its own, shaped by the ActivityClass offering
 * what it requires; its pod reports the command's result, recorded once; the run waiting for it
 * holds no pod. The kubelet and the Job controller are played here (support/cluster.ts): pass
 * pods run `spool agent` and `spool pass`, attempt pods `spool-activity-attempt`, as processes.
 */
const FAN_OUT = `regions="eu-north us-east ap-south"

# Submit every item before waiting on any, so they run side by side.
for region in $regions; do
  spool activity submit "probe-$region" --requires shell --attempts 3 --backoff 5s \\
    -- sh -c 'echo "$1: $((RANDOM % 50 + 10))ms"' _ "$region"
done

for region in $regions; do
  spool activity wait "probe-$region"
done
`;

// The seed's retry recipe, its command one that fails twice with 75 and then answers.
const RETRY = `rates="$(spool activity run fetch-rates --requires shell \\
  --attempts 5 --backoff 1s --retry-on-exit 75 \\
  -- sh -c 'test "$SPOOL_ATTEMPT" -ge 3 || exit 75; echo 1.0842')"
spool step store -- echo "stored $rates"
`;

// Its stderr says why, over a NUL and a byte that is not UTF-8: the report keeps the tail as text.
const WRONG_INPUT = `spool activity run check --requires shell --attempts 5 --backoff 1s --retry-on-exit 75 -- sh -c 'printf "raw \\000 \\377 bytes\\nno account 42\\n" >&2; exit 64'\n`;
// Its stdout is bytes (a NUL, a byte not UTF-8): the pod reports them as base64, kept and waited as they were.
const BYTES = `spool activity run bytes --requires shell -- printf 'x\\000y \\377' | od -An -tx1\n`;
const SLOW = `spool activity run slow --requires shell -- sh -c 'sleep 4; echo "slept in attempt $SPOOL_ATTEMPT"'\n`;
const BOTH = `spool activity submit render --requires shell --requires gpu -- echo never\n`;
const GPU = `spool activity submit train --requires gpu -- echo never\necho not reached\n`;

const isActivityJob = (job: V1Job): boolean => Boolean(job.metadata?.labels?.['hyperspool.dev/activity']);

/**
 * Plays the kubelet for the namespace: every new pass Job's pod runs, and every new attempt Job's
 * pod too, unless `hold` keeps it (the test runs it, or loses it, itself).
 */
function kubelet(cluster: Cluster, at: string | (() => string), hold: (job: V1Job) => boolean = () => false) {
  // A function when the operator may change under way (a new leader): each pod reaches the one leading then.
  const url = (): string => (typeof at === 'string' ? at : at());
  const seen = new Set<string>();
  const held: V1Job[] = [];
  const pods: Promise<unknown>[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const jobs = await cluster.batch
        .listNamespacedJob({ namespace: cluster.namespace })
        .catch(() => ({ items: [] as V1Job[] }));
      for (const job of jobs.items) {
        const name = job.metadata?.name ?? '';
        if (seen.has(name) || job.status?.conditions?.length) continue;
        seen.add(name);
        if (isActivityJob(job) && hold(job)) held.push(job);
        else
          pods.push(
            (isActivityJob(job) ? startActivityPod(cluster, url(), job) : startPod(cluster, url(), job))
              .then((pod) => pod.done)
              .catch(() => undefined),
          );
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  return {
    held,
    async stop() {
      stopped = true;
      await loop;
      await Promise.all(pods);
    },
  };
}

describe('activities on a cluster', () => {
  let cluster: Cluster;
  let operator: Operator;

  beforeAll(async () => {
    cluster = await startCluster('team-act');
    operator = await cluster.startLeader('op-activities');
    // The admin's one declaration: what `--requires shell` means on this cluster.
    await cluster.custom.createClusterCustomObject({
      group: 'hyperspool.dev',
      version: 'v1alpha1',
      plural: 'activityclasses',
      body: {
        apiVersion: 'hyperspool.dev/v1alpha1',
        kind: 'ActivityClass',
        metadata: { name: 'shell', labels: { [TEST_LABEL]: 'true' } },
        spec: {
          capabilities: ['shell'],
          image: 'registry.example/tools:1',
          serviceAccountName: 'default',
          nodeSelector: { pool: 'batch' },
          tolerations: [{ key: 'batch', operator: 'Exists', effect: 'NoSchedule' }],
          resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { memory: '128Mi' } },
        },
      },
    });
    // A class whose pods can never start: an image name no pull can mend.
    await cluster.custom.createClusterCustomObject({
      group: 'hyperspool.dev',
      version: 'v1alpha1',
      plural: 'activityclasses',
      body: {
        apiVersion: 'hyperspool.dev/v1alpha1',
        kind: 'ActivityClass',
        metadata: { name: 'broken', labels: { [TEST_LABEL]: 'true' } },
        spec: { capabilities: ['broken'], image: 'Bad:Image' },
      },
    });
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  const runEnds = (name: string) =>
    eventually(
      `${name} to end`,
      async () => {
        const run = await getRun(cluster, name);
        return ['Succeeded', 'Failed', 'Cancelled'].includes(run.status?.phase ?? '') && run;
      },
      120_000,
    );
  const logOf = async (name: string): Promise<string> => {
    const runId = (await getRun(cluster, name)).status?.runId ?? '';
    return (await operator.store.readLogs(runId)).map((line) => line.text).join('');
  };
  /** A token bound to the attempt's pod (made again if it was deleted), as the kubelet projects it. */
  const tokenOf = async (job: V1Job): Promise<string> => {
    const name = `${job.metadata?.name ?? ''}-pod`;
    const pod = await cluster.core.readNamespacedPod({ namespace: cluster.namespace, name }).catch(() => null);
    if (!pod) return (await givenPodOf(cluster, job)).token;
    const request = await cluster.core.createNamespacedServiceAccountToken({
      namespace: cluster.namespace,
      name: 'default',
      body: {
        spec: {
          audiences: ['hyperspool'],
          expirationSeconds: 3600,
          boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name, uid: pod.metadata?.uid ?? '' },
        },
      },
    });
    return request.status?.token ?? '';
  };
  const attemptJobs = async (name: string): Promise<V1Job[]> => {
    const key = (await getRun(cluster, name)).metadata.labels?.['hyperspool.dev/run'] ?? '';
    return (await jobsOf(cluster, key))
      .filter(isActivityJob)
      .sort(
        (a, b) =>
          Number(a.metadata?.labels?.['hyperspool.dev/attempt']) -
          Number(b.metadata?.labels?.['hyperspool.dev/attempt']),
      );
  };

  it("given the seed's fan-out recipe, then each item is a Job of its own shaped by the ActivityClass, and the waits print the results in the order waited for", async () => {
    const pods = kubelet(cluster, operator.url);
    try {
      await givenWorkflow(cluster, 'fan-out', 'fan-out.sh', FAN_OUT);
      await whenRunCreated(cluster, 'fan-out-1', 'fan-out');
      const run = await runEnds('fan-out-1');
      expect(run.status?.message).toBeUndefined();
      expect(run.status?.phase).toBe('Succeeded');
      expect((await logOf('fan-out-1')).split('\n').filter(Boolean)).toEqual([
        expect.stringMatching(/^eu-north: \d+ms$/),
        expect.stringMatching(/^us-east: \d+ms$/),
        expect.stringMatching(/^ap-south: \d+ms$/),
      ]);
      const jobs = await attemptJobs('fan-out-1');
      expect(
        jobs.map((job) => job.spec?.template.metadata?.annotations?.['hyperspool.dev/activity-name']).sort(),
      ).toEqual(['probe-ap-south', 'probe-eu-north', 'probe-us-east']);
      // One attempt each: the run suspending at its first wait left the attempts under way alone.
      expect(jobs.map((job) => job.metadata?.labels?.['hyperspool.dev/attempt'])).toEqual(['1', '1', '1']);
      for (const job of jobs) {
        expect(job.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Run', name: 'fan-out-1', controller: true });
        expect(job.spec?.backoffLimit).toBe(0);
        const pod = job.spec?.template.spec;
        expect(pod).toMatchObject({
          serviceAccountName: 'default',
          automountServiceAccountToken: false,
          nodeSelector: { pool: 'batch' },
          tolerations: [{ key: 'batch', operator: 'Exists', effect: 'NoSchedule' }],
        });
        expect(pod?.containers[0]).toMatchObject({
          image: 'registry.example/tools:1',
          resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { memory: '128Mi' } },
        });
        expect(pod?.containers[0]?.command?.slice(0, 2)).toEqual(['/spool/bin/spool-activity-attempt', '--']);
        expect(
          pod?.volumes?.find((volume) => volume.name === 'token')?.projected?.sources?.[0]?.serviceAccountToken
            ?.audience,
        ).toBe('hyperspool');
      }
    } finally {
      await pods.stop();
    }
  });

  it("given the seed's retry recipe with a command failing twice with 75, then three attempts, each a new Job, the waits doubling; only the final result is recorded", async () => {
    const pods = kubelet(cluster, operator.url);
    try {
      await givenWorkflow(cluster, 'rates', 'rates.sh', RETRY);
      await givenWorkflow(cluster, 'check', 'check.sh', WRONG_INPUT);
      await givenWorkflow(cluster, 'bytes', 'bytes.sh', BYTES);
      await whenRunCreated(cluster, 'rates-1', 'rates');
      await whenRunCreated(cluster, 'check-1', 'check');
      await whenRunCreated(cluster, 'bytes-1', 'bytes');
      const rates = await runEnds('rates-1');
      expect(rates.status?.message).toBeUndefined();
      expect(await logOf('rates-1')).toBe('stored 1.0842\n');
      const jobs = await attemptJobs('rates-1');
      expect(jobs.map((job) => job.metadata?.labels?.['hyperspool.dev/attempt'])).toEqual(['1', '2', '3']);
      const created = jobs.map((job) => new Date(job.metadata?.creationTimestamp ?? 0).getTime() / 1000);
      // --backoff 1s: the second attempt at least 1 s after the first, the third at least 2 s after that.
      expect(created[1]! - created[0]!).toBeGreaterThanOrEqual(1);
      expect(created[2]! - created[1]!).toBeGreaterThanOrEqual(2);
      const runId = (await getRun(cluster, 'rates-1')).status?.runId ?? '';
      const results = (await operator.store.readJournal(runId)).filter(
        (entry) => entry.verb === 'activity.run' && entry.kind === 'result',
      );
      expect(results.map((entry) => entry.data)).toEqual([{ stdout: '1.0842\n', exitCode: 0, attempts: 3 }]);

      // Exit 64 is not one --retry-on-exit names: the first attempt is the last. The pod reported its
      // stderr's tail: the Run's message says why, the wait's answer stays as it was.
      const check = await runEnds('check-1');
      expect(check.status?.phase).toBe('Failed');
      expect(check.status?.message).toBe("script exited 64 (activity 'check' exited 64: no account 42)");
      expect(await logOf('check-1')).toContain('spool: activity check failed with exit 64 after 1 attempt');
      expect(await attemptJobs('check-1')).toHaveLength(1);
      const checked = (await operator.store.readJournal(check.status?.runId ?? '')).find(
        (entry) => entry.verb === 'activity.run' && entry.kind === 'result',
      );
      expect(checked?.data).toEqual({
        stdout: '',
        exitCode: 64,
        attempts: 1,
        stderr: 'spool: activity check failed with exit 64 after 1 attempt',
        stderrTail: 'raw \uFFFD \uFFFD bytes\nno account 42',
      });

      const bytes = await runEnds('bytes-1');
      expect(bytes.status?.phase).toBe('Succeeded');
      expect((await logOf('bytes-1')).trim()).toBe('78 00 79 20 ff');
      const kept = (await operator.store.readJournal(bytes.status?.runId ?? '')).find(
        (entry) => entry.verb === 'activity.run' && entry.kind === 'result',
      );
      expect(kept?.data).toEqual({ stdoutBase64: Buffer.from('x\0y \xff', 'latin1').toString('base64'), exitCode: 0, attempts: 1 });
    } finally {
      await pods.stop();
    }
  });

  it('given an attempt whose pod is deleted mid-command, then the run holds no pod meanwhile, the activity is tried again as a new attempt, and its result is recorded once', async () => {
    let first: V1Job | undefined;
    const pods = kubelet(cluster, operator.url, (job) => {
      if (first || job.metadata?.labels?.['hyperspool.dev/attempt'] !== '1') return false;
      first = job;
      return true;
    });
    try {
      await givenWorkflow(cluster, 'slow', 'slow.sh', SLOW);
      await whenRunCreated(cluster, 'slow-1', 'slow');
      await eventually('attempt 1 held', () => Promise.resolve(pods.held.length === 1));
      const pod = await startActivityPod(cluster, operator.url, pods.held[0]!);
      // While attempt 1 runs, the run waits for it holding no pod: its pass's Job is gone.
      const waiting = await eventually('slow-1 waiting', async () => {
        const run = await getRun(cluster, 'slow-1');
        return run.status?.phase === 'Waiting' && run;
      });
      expect(waiting.status?.awaiting).toBe('activity slow');
      const key = waiting.metadata.labels?.['hyperspool.dev/run'] ?? '';
      expect((await jobsOf(cluster, key)).filter((job) => !isActivityJob(job))).toEqual([]);
      await pod.deletePod();

      const run = await runEnds('slow-1');
      expect(run.status?.message).toBeUndefined();
      expect(await logOf('slow-1')).toBe('slept in attempt 2\n');
      expect((await attemptJobs('slow-1')).map((job) => job.metadata?.labels?.['hyperspool.dev/attempt'])).toEqual([
        '1',
        '2',
      ]);
      const runId = run.status?.runId ?? '';
      const results = (await operator.store.readJournal(runId)).filter(
        (entry) => entry.verb === 'activity.run' && entry.kind === 'result',
      );
      expect(results.map((entry) => entry.data)).toEqual([
        { stdout: 'slept in attempt 2\n', exitCode: 0, attempts: 2 },
      ]);

      // A late report of the lost attempt, or a second one of the last, lands nowhere.
      const [lost, last] = await attemptJobs('slow-1');
      for (const job of [lost!, last!]) {
        const token = await tokenOf(job);
        const attempt = job.metadata?.labels?.['hyperspool.dev/attempt'];
        const response = await fetch(
          `${operator.url}/v1/agent/runs/${encodeURIComponent(runId)}/activities/slow/attempts/${attempt}`,
          {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ stdout: 'late\n', exitCode: 0 }),
          },
        );
        expect(response.status).toBe(409);
      }
      expect((await operator.store.getActivity(`${runId}/slow`))?.result).toEqual({
        stdout: 'slept in attempt 2\n',
        exitCode: 0,
        attempts: 2,
      });
    } finally {
      await pods.stop();
    }
  });

  it("given an attempt whose pod can never start (an invalid image name), then the attempt fails at once, its reason in the run's log, and --attempts tries again", async () => {
    const pods = kubelet(cluster, operator.url, () => true);
    try {
      await givenWorkflow(
        cluster,
        'unstartable',
        'unstartable.sh',
        'spool activity run render --requires broken --attempts 2 --backoff 1s -- echo never\n',
      );
      const name = 'unstartable-1';
      await whenRunCreated(cluster, name, 'unstartable');
      // Plays the kubelet: each attempt's pod waits, its image name one no pull can mend.
      for (const attempt of [1, 2]) {
        const job = await eventually(`attempt ${attempt} held`, () =>
          Promise.resolve(
            pods.held.find((held) => held.metadata?.labels?.['hyperspool.dev/attempt'] === String(attempt)),
          ),
        );
        const { pod } = await givenPodOf(cluster, job);
        await cluster.core.patchNamespacedPodStatus(
          {
            namespace: cluster.namespace,
            name: pod.metadata?.name ?? '',
            body: {
              status: {
                phase: 'Pending',
                containerStatuses: [
                  {
                    name: 'activity',
                    image: 'Bad:Image',
                    imageID: '',
                    ready: false,
                    restartCount: 0,
                    state: {
                      waiting: {
                        reason: 'InvalidImageName',
                        message: 'Failed to apply default image tag "Bad:Image": invalid reference format',
                      },
                    },
                  },
                ],
              },
            },
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
      }
      const run = await runEnds(name);
      expect(run.status?.phase).toBe('Failed');
      const log = await logOf(name);
      expect(log).toContain(
        'spool: activity render, attempt 2: the activity container cannot start: InvalidImageName: Failed to apply default image tag "Bad:Image": invalid reference format',
      );
      expect(log).toContain('spool: activity render failed with exit 1 after 2 attempts');
    } finally {
      await pods.stop();
    }
  });

  it('given an activity requiring a capability no ActivityClass offers, then its submit is refused at once with one line naming it, and nothing is queued', async () => {
    const pods = kubelet(cluster, operator.url);
    let tries = 0;
    try {
      await givenWorkflow(cluster, 'train', 'train.sh', GPU);
      await whenRunCreated(cluster, 'train-1', 'train');
      const run = await runEnds('train-1');
      expect(run.status?.phase).toBe('Failed');
      const log = await logOf('train-1');
      expect(log).toContain("no ActivityClass on this cluster offers 'gpu' (offered: broken, shell)");
      expect(log).not.toContain('not reached');
      expect(await operator.store.listActivities(run.status?.runId ?? '')).toEqual([]);
      expect(await attemptJobs('train-1')).toEqual([]);

      // gpu offered, by a class of its own: an activity needing shell and gpu together has no pod to run in.
      await cluster.custom.createClusterCustomObject({
        group: 'hyperspool.dev',
        version: 'v1alpha1',
        plural: 'activityclasses',
        body: {
          apiVersion: 'hyperspool.dev/v1alpha1',
          kind: 'ActivityClass',
          metadata: { name: 'gpu', labels: { [TEST_LABEL]: 'true' } },
          spec: { capabilities: ['gpu'] },
        },
      });
      await givenWorkflow(cluster, 'both', 'both.sh', BOTH);
      await eventually('the gpu class seen', async () => {
        await whenRunCreated(cluster, `both-${++tries}`, 'both');
        const both = await runEnds(`both-${tries}`);
        return (
          (await logOf(`both-${tries}`)).includes(
            "no one ActivityClass on this cluster offers 'shell', 'gpu' together",
          ) && both
        );
      });
    } finally {
      await pods.stop();
    }
  });
  it("given a leader that goes while an attempt runs, then the next leader tries it again as a new attempt, ends the old pod's Job, and the old pod's report lands nowhere", async () => {
    let first: V1Job | undefined;
    const pods = kubelet(
      cluster,
      () => operator.url,
      (job) => {
        if (first || job.metadata?.labels?.['hyperspool.dev/attempt'] !== '1') return false;
        first = job;
        return true;
      },
    );
    try {
      await givenWorkflow(cluster, 'handover', 'handover.sh', SLOW.replace('run slow', 'run handover'));
      await whenRunCreated(cluster, 'handover-1', 'handover');
      await eventually('attempt 1 held', () => Promise.resolve(pods.held.length === 1));
      const token = await tokenOf(pods.held[0]!);
      await operator.kill();
      const next = await cluster.startOperator('op-activities-2');
      await eventually('the next operator to lead', () => Promise.resolve(next.isLeader()), 30_000);
      operator = next;
      // Attempt 2 is made and run by the kubelet; attempt 1's Job, never settled, is ended.
      await eventually(
        "attempt 1's Job gone",
        async () =>
          !(await attemptJobs('handover-1')).some((job) => job.metadata?.labels?.['hyperspool.dev/attempt'] === '1'),
        60_000,
      );
      const run = await runEnds('handover-1');
      expect(run.status?.phase).toBe('Succeeded');
      expect(await logOf('handover-1')).toBe('slept in attempt 2\n');
      const runId = run.status?.runId ?? '';
      const late = await fetch(
        `${next.url}/v1/agent/runs/${encodeURIComponent(runId)}/activities/handover/attempts/1`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ stdout: 'late\n', exitCode: 0 }),
        },
      );
      expect(late.status).toBe(409);
      const results = (await next.store.readJournal(runId)).filter(
        (entry) => entry.verb === 'activity.run' && entry.kind === 'result',
      );
      expect(results.map((entry) => entry.data)).toEqual([
        { stdout: 'slept in attempt 2\n', exitCode: 0, attempts: 2 },
      ]);
    } finally {
      await pods.stop();
    }
  });
});
