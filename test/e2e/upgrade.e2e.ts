// An upgrade with runs in flight, on the real node (issue 19, item 6): the previous release (the
// commit test/e2e/upgrade/previous-release names, built by hack/previous-release.sh: its images
// and its config/) is installed with `kubectl apply -k`, runs are left sleeping, waiting on a
// signal, holding a lock (and another queued behind it) and at a pipeline's approval gate, then
// this checkout is applied over it with `kubectl apply -k` as a user upgrades. Both new operator
// replicas start at once (config/manager's rollout strategy) and migrate the database: one applies
// the migration the previous release lacked, the other finds it applied. Each run's journal up to
// the upgrade is unchanged after it, and every run finishes once signalled, released and approved.
//
// The operator and the CRDs are cluster-wide, so this file replaces the install the other e2e
// files use; files take turns (test/e2e/vitest.config.ts), each file installs this checkout in its
// beforeAll, and this one puts the standard install back in its afterAll. Its runs keep their
// journal in a PostgreSQL of their own (in the test's namespace), so the upgrade starts from an
// empty database that the previous release migrated, whatever the suite's database holds. Since
// an operator admits every Run its database does not know, the test first waits until no other
// file's Runs are left (each file deletes its namespaces at its end), and refuses to go on, saying
// which, while some are.
//
//   npm run test:e2e -- test/e2e/upgrade.e2e.ts
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  GaveUp,
  deployHyperspool,
  noRunsOfOtherFiles,
  E2E_LABEL,
  eventually,
  openCluster,
  OPERATOR_PODS,
  operatorRolledOut,
  repo,
  sh,
  SYSTEM,
  type Cluster,
  type KubeObject,
  type OperatorPod,
} from './support/cluster.js';

interface RunResource {
  metadata: { name: string };
  status?: { phase?: string; awaiting?: string; message?: string };
}

interface JournalLine {
  position: number;
  kind: string;
  verb: string;
  name: string;
  data: unknown;
}

const PASSWORD = 'hyperspool-upgrade';

/** The runs left in flight across the upgrade: each script, and what it awaits before the upgrade. */
const SCRIPTS = {
  // Long enough to sleep through the install of the other runs and the upgrade (about 40 s on a
  // quiet node, the test's first file), so it wakes after; the test checks it still slept then.
  sleeper: 'spool step before -- echo slept\nspool sleep 100s\nspool step after -- echo woke\n',
  waiter:
    'spool step before -- echo waiting\npayload=$(spool wait signal go --timeout 1h)\nspool step after -- echo "got $payload"\n',
  // The bare lease stays held until the run ends (after its signal).
  holder: 'spool lock upgrade-lock\nspool step held -- echo holding\nspool wait signal release --timeout 1h\n',
  queued: 'spool lock upgrade-lock -- echo "locked section"\n',
};
const GATE = `name: gate
jobs:
  build:
    steps:
      - name: build
        run: echo built
  approve:
    depends_on: [build]
    approval:
      prompt: "Ship it?"
      timeout: 1h
  ship:
    depends_on: [approve]
    steps:
      - name: ship
        run: echo shipped
`;

// On the local node only: hack/previous-release.sh imports the previous release's images into its
// containerd (kind's nodes would need `kind load`, which hack/kind.sh does for this checkout's only).
describe.skipIf(Boolean(process.env.HYPERSPOOL_E2E_KUBECONFIG))(
  'an upgrade from the previous release with runs in flight (kubectl apply -k)',
  { timeout: 900_000 },
  () => {
    const runLabel = `e2e-${Date.now().toString(36)}`;
    const namespace = `${runLabel}-upgrade`;
    let cluster: Cluster;
    let userConfig = '';
    let previous = { dir: '', tag: '' };
    const overlays = mkdtempSync(join(tmpdir(), 'hyperspool-upgrade-'));

    const kubectl = (...args: string[]): Promise<string> => cluster.kubectl(...args);
    const spool = (...args: string[]): Promise<string> =>
      sh(process.execPath, [join(repo, 'bin', 'spool'), ...args, '--kubeconfig', userConfig, '-n', namespace]);
    const run = (name: string): Promise<RunResource> => cluster.getJson<RunResource>('-n', namespace, 'run', name);
    const journal = async (name: string): Promise<JournalLine[]> =>
      JSON.parse(await spool('journal', name, '--json')) as JournalLine[];
    const operatorPods = async (): Promise<OperatorPod[]> =>
      (await cluster.getJson<{ items: OperatorPod[] }>('-n', SYSTEM, 'pods', '-l', OPERATOR_PODS)).items;

    /**
     * `kubectl apply -k` of a release, as a user installs or upgrades (server-side: the CRDs are
     * large): a kustomization over that release's test/e2e/deploy (config/quickstart as the suite
     * installs it) whose operator keeps its journal in this test's PostgreSQL; `extra` adds images
     * and patches.
     */
    async function applyRelease(name: string, deploy: string, extra = ''): Promise<void> {
      const dir = join(overlays, name);
      await sh('mkdir', ['-p', dir]);
      const url = `postgres://hyperspool:${PASSWORD}@upgrade-postgres.${namespace}.svc:5432/postgres`;
      writeFileSync(
        join(dir, 'kustomization.yaml'),
        `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ${relative(dir, deploy)}
secretGenerator:
  - name: hyperspool-db
    namespace: ${SYSTEM}
    behavior: merge
    literals:
      - url=${url}
${extra}`,
      );
      await kubectl('apply', '--server-side', '--force-conflicts', '-k', dir);
    }


    const whenAwaiting = (name: string, awaiting: RegExp): Promise<RunResource> =>
      eventually(
        `${name} awaiting ${awaiting.source}`,
        async () => {
          const resource = await run(name);
          if (resource.status?.phase === 'Failed')
            throw new GaveUp(`${name} failed: ${resource.status.message}\n${await cluster.operatorLogs()}`);
          return resource.status?.phase === 'Waiting' && awaiting.test(resource.status.awaiting ?? '') && resource;
        },
        180_000,
      );

    const whenSucceeded = (name: string): Promise<RunResource> =>
      eventually(
        `${name} Succeeded`,
        async () => {
          const resource = await run(name);
          if (resource.status?.phase === 'Failed')
            throw new GaveUp(`${name} failed: ${resource.status.message}\n${await cluster.operatorLogs()}`);
          return resource.status?.phase === 'Succeeded' && resource;
        },
        240_000,
      );

    beforeAll(async () => {
      cluster = await openCluster(runLabel);
      // The operator admits any Run its database has no record of: Runs other files left would run
      // again on this test's database.
      await noRunsOfOtherFiles(cluster, 'the upgrade test');
      // Built once per commit (cached), its two images imported into the node under prev-<hash> tags.
      const [dir = '', tag = ''] = (await sh('bash', [join(repo, 'hack', 'previous-release.sh')])).trim().split('\n');
      previous = { dir, tag };
      await cluster.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
      await cluster.apply(...upgradeDatabase(namespace));
      await kubectl('-n', namespace, 'rollout', 'status', 'deployment/upgrade-postgres', '--timeout=180s');
      await eventually('the default ServiceAccount', () =>
        kubectl('-n', namespace, 'get', 'serviceaccount', 'default'),
      );
    });

    afterAll(async () => {
      rmSync(overlays, { recursive: true, force: true });
      if (!cluster) return;
      // The Runs go first, while the operator still reaches their journal in this namespace's
      // database; then the suite's own install comes back for the files after this one; then the
      // namespace. In the other order the namespace took the whole 180 s: deleting it asks the
      // aggregated API (the operator) about its resources, and the operator's database was in it.
      await kubectl('-n', namespace, 'delete', 'runs', '--all', '--timeout=60s').catch(() => undefined);
      await kubectl('-n', SYSTEM, 'delete', 'rolebinding', '-l', `${E2E_LABEL}=${runLabel}`).catch(() => undefined);
      await deployHyperspool(cluster);
      await kubectl('delete', 'namespace', namespace, '--timeout=180s').catch(() => undefined);
      await cluster.close();
    });

    it('given runs sleeping, waiting on a signal, holding and queued on a lock and at an approval gate under the previous release, when this checkout is applied over it, then the migration runs once, their journals are unchanged and every run finishes', async () => {
      // The previous release as its users installed it: its config/, its images.
      await applyRelease(
        'previous',
        join(previous.dir, 'test', 'e2e', 'deploy'),
        `images:
  - name: hyperspool/operator
    newTag: ${previous.tag}
patches:
  - target:
      kind: Deployment
      name: hyperspool-operator
    patch: |-
      - op: add
        path: /spec/template/spec/containers/0/args/-
        value: --runner-image=hyperspool/runner:${previous.tag}
`,
      );
      await operatorRolledOut(cluster, `hyperspool/operator:${previous.tag}`);
      userConfig = await cluster.givenPerson(namespace, 'person', 'hyperspool-edit');

      // Runs in flight under the previous release.
      const workflow = (name: string, filename: string, script: string): KubeObject => ({
        apiVersion: 'hyperspool.dev/v1alpha1',
        kind: 'Workflow',
        metadata: { name, namespace },
        spec: { filename, script },
      });
      const runOf = (name: string): KubeObject => ({
        apiVersion: 'hyperspool.dev/v1alpha1',
        kind: 'Run',
        metadata: { name: `${name}-1`, namespace },
        spec: { workflowRef: { name } },
      });
      await cluster.apply(
        ...Object.entries(SCRIPTS).map(([name, script]) => workflow(name, `${name}.sh`, script)),
        workflow('gate', 'gate.yaml', GATE),
        runOf('sleeper'),
        runOf('waiter'),
        runOf('holder'),
        runOf('gate'),
      );
      await whenAwaiting('holder-1', /^signal release$/);
      // Queued behind the holder's lease only once the holder has it.
      await cluster.apply(runOf('queued'));
      await Promise.all([
        whenAwaiting('sleeper-1', /^timer /),
        whenAwaiting('waiter-1', /^signal go$/),
        whenAwaiting('queued-1', /^lease upgrade-lock$/),
        whenAwaiting('gate-1', /^approval approve$/),
      ]);
      const runs = ['sleeper-1', 'waiter-1', 'holder-1', 'queued-1', 'gate-1'];
      const before = new Map(await Promise.all(runs.map(async (name) => [name, await journal(name)] as const)));
      // Still asleep when its journal was read: the sleep is in flight across the upgrade.
      expect((await run('sleeper-1')).status?.awaiting).toMatch(/^timer /);
      const oldPods = new Set((await operatorPods()).map((pod) => pod.metadata.name));

      // The upgrade: this checkout's config/ and images (hyperspool/operator:dev, the runner's :dev).
      await applyRelease('current', join(repo, 'test', 'e2e', 'deploy'));
      const newPods = await operatorRolledOut(cluster, 'hyperspool/operator:dev');
      expect(newPods.filter((pod) => oldPods.has(pod.metadata.name))).toEqual([]);
      expect((await run('sleeper-1')).status?.awaiting, 'the sleeper woke before the upgrade ended: lengthen its sleep').toMatch(/^timer /);

      // Both new replicas migrated at start; the advisory lock let one apply each migration the previous release lacked.
      // A replica that restarted (an operator exits when a dependency it checks at start is not up
      // yet) logged its first start in its previous container.
      const migrations = await Promise.all(
        newPods.map(async (pod) => {
          const restarted = (pod.status?.containerStatuses?.[0]?.restartCount ?? 0) > 0;
          const logs =
            (restarted ? await kubectl('-n', SYSTEM, 'logs', '--previous', pod.metadata.name) : '') +
            (await kubectl('-n', SYSTEM, 'logs', pod.metadata.name));
          return logs
            .split('\n')
            .filter((line) => line.includes('"msg":"database'))
            .map((line) => JSON.parse(line) as { msg: string; applied?: string });
        }),
      );
      expect(migrations.every((lines) => lines.length > 0)).toBe(true);
      const applied = migrations.flat().filter((line) => line.msg === 'database migrated');
      // Each migration this checkout has and the previous release lacked was applied once, by one
      // replica or the other: each is a transaction of its own under the lock (src/store/migrate.ts),
      // so a replica that started a moment later may apply the last ones (seen on a loaded node).
      const migrationNames = (dir: string): string[] =>
        readdirSync(join(dir, 'src', 'store', 'migrations')).filter((name) => name.endsWith('.sql'));
      const lacked = migrationNames(repo).filter((name) => !migrationNames(previous.dir).includes(name));
      expect(lacked.length).toBeGreaterThan(0);
      expect(applied.flatMap((line) => line.applied?.split(',') ?? []).sort()).toEqual(lacked.sort());
      expect(
        migrations
          .flat()
          .every((line) => line.msg === 'database migrated' || line.msg === 'database schema up to date'),
      ).toBe(true);

      // Every run finishes: the sleeper wakes by itself, the others once answered.
      expect(await spool('signal', 'waiter-1', 'go', 'yes')).toBe('signal go queued for waiter-1\n');
      expect(await spool('approve', 'gate-1', 'approve')).toBe('approved approve of gate-1\n');
      expect(await spool('signal', 'holder-1', 'release')).toBe('signal release queued for holder-1\n');
      await Promise.all(runs.map((name) => whenSucceeded(name)));
      expect(await spool('logs', 'sleeper-1')).toBe('slept\nwoke\n');
      expect(await spool('logs', 'waiter-1')).toBe('waiting\ngot yes\n');
      expect(await spool('logs', 'queued-1')).toBe('locked section\n');
      expect(await spool('logs', 'gate-1')).toContain('shipped\n');

      // Nothing recorded before the upgrade was reinterpreted: each journal begins with what it held
      // then, entry for entry (the new release may add fields, never change one), and went on from there.
      for (const name of runs) {
        const was = before.get(name) ?? [];
        const now = await journal(name);
        expect(now.length, name).toBeGreaterThan(was.length);
        for (const [index, entry] of was.entries()) expect(now[index], `${name} entry ${index}`).toMatchObject(entry);
      }
    });
  },
);

/** A PostgreSQL of the test's own (its data in the pod: it lives as long as the namespace). */
function upgradeDatabase(namespace: string): KubeObject[] {
  const labels = { 'app.kubernetes.io/name': 'upgrade-postgres' };
  const script = [
    'set -e',
    'if [ ! -s "$PGDATA/PG_VERSION" ]; then',
    '  printf %s "$POSTGRES_PASSWORD" >/tmp/pwfile',
    '  initdb -D "$PGDATA" -U hyperspool --pwfile=/tmp/pwfile --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C >/dev/null',
    `  echo 'host all all all scram-sha-256' >>"$PGDATA/pg_hba.conf"`,
    'fi',
    `exec postgres -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/tmp`,
  ].join('\n');
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'upgrade-postgres', namespace },
      spec: { selector: labels, ports: [{ name: 'postgres', port: 5432, targetPort: 5432 }] },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'upgrade-postgres', namespace },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            securityContext: { runAsNonRoot: true, runAsUser: 999, runAsGroup: 999, fsGroup: 999 },
            containers: [
              {
                name: 'postgres',
                image: 'hyperspool/postgres:dev',
                imagePullPolicy: 'IfNotPresent',
                command: ['sh', '-c', script],
                env: [
                  { name: 'PGDATA', value: '/var/lib/postgresql/data/pgdata' },
                  { name: 'POSTGRES_PASSWORD', value: PASSWORD },
                ],
                ports: [{ name: 'postgres', containerPort: 5432 }],
                readinessProbe: {
                  exec: { command: ['pg_isready', '-h', '127.0.0.1', '-U', 'hyperspool'] },
                  periodSeconds: 2,
                },
                volumeMounts: [{ name: 'data', mountPath: '/var/lib/postgresql/data' }],
              },
            ],
            volumes: [{ name: 'data', emptyDir: {} }],
          },
        },
      },
    },
  ];
}
