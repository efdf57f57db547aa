import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { V1Deployment, V1PersistentVolumeClaim, V1Secret } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { startControlPlane, type ControlPlane } from '../support/kube.js';

const REPO = join(import.meta.dirname, '..', '..');

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  [field: string]: unknown;
}

/**
 * config/quickstart, the one-command install with a database, against a real kube-apiserver. The
 * e2e suite installs it on a node whose pods run (test/e2e/deploy); this checks what it is made of.
 */
describe('config/quickstart', () => {
  let plane: ControlPlane;
  const kubectl = (args: string[]): { stdout: string; stderr: string } => {
    const result = spawnSync(plane.kubectl, ['--kubeconfig', plane.kubeconfigPath, ...args], { cwd: REPO, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`kubectl ${args.join(' ')} failed:\n${result.stderr}`);
    return { stdout: result.stdout, stderr: result.stderr };
  };

  beforeAll(async () => {
    plane = await startControlPlane();
  }, 180_000);

  afterAll(async () => {
    await plane?.stop();
  });

  it('is config/default plus a PostgreSQL on a claim, and the generated Secret both Deployments read', () => {
    const text = kubectl(['kustomize', 'config/quickstart']).stdout;
    const objects = parseAllDocuments(text).map((doc) => doc.toJS() as Manifest);
    const defaults = parseAllDocuments(kubectl(['kustomize', 'config/default']).stdout).map((doc) => doc.toJS() as Manifest);
    const added = objects.filter((o) => !defaults.some((d) => d.kind === o.kind && d.metadata.name === o.metadata.name));
    expect(added.map((o) => `${o.kind}/${o.metadata.name.replace(/-[a-z0-9]{10}$/, '-<hash>')}`).sort()).toEqual([
      'Deployment/hyperspool-postgres',
      'NetworkPolicy/hyperspool-postgres',
      'PersistentVolumeClaim/hyperspool-postgres-data',
      'Secret/hyperspool-db-<hash>',
      'Service/hyperspool-postgres',
    ]);
    for (const object of added) expect(object.metadata.namespace, object.kind).toBe('hyperspool-system');

    const secret = added.find((o) => o.kind === 'Secret') as unknown as V1Secret;
    const data = Object.fromEntries(Object.entries(secret.data ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64').toString('utf8')]));
    const url = new URL(data.url ?? '');
    expect([url.protocol, url.hostname, url.port, url.password]).toEqual(['postgres:', 'hyperspool-postgres.hyperspool-system.svc', '5432', data.password]);

    // kustomize put the Secret's generated name wherever the two Deployments name hyperspool-db.
    const deployment = (name: string) => objects.find((o) => o.kind === 'Deployment' && o.metadata.name === name) as unknown as V1Deployment;
    const secretOf = (name: string, variable: string) =>
      deployment(name).spec?.template.spec?.containers[0]?.env?.find((e) => e.name === variable)?.valueFrom?.secretKeyRef;
    expect(secretOf('hyperspool-operator', 'DATABASE_URL')).toEqual({ name: secret.metadata?.name, key: 'url' });
    expect(secretOf('hyperspool-postgres', 'POSTGRES_PASSWORD')).toEqual({ name: secret.metadata?.name, key: 'password' });

    const postgres = deployment('hyperspool-postgres');
    expect(postgres.spec?.replicas).toBe(1);
    expect(postgres.spec?.strategy?.type).toBe('Recreate');
    const claim = added.find((o) => o.kind === 'PersistentVolumeClaim') as unknown as V1PersistentVolumeClaim;
    expect(postgres.spec?.template.spec?.volumes).toEqual([{ name: 'data', persistentVolumeClaim: { claimName: claim.metadata?.name } }]);
    // No class named: the cluster's default StorageClass provisions it.
    expect(claim.spec?.storageClassName).toBeUndefined();
  });

  it('applies in one command (a server-side dry run), and its PostgreSQL meets the restricted Pod Security Standard of hyperspool-system', () => {
    kubectl(['apply', '--server-side', '-f', 'config/manager/namespace.yaml']);
    const { stdout, stderr } = kubectl(['apply', '--server-side', '--dry-run=server', '-k', 'config/quickstart']);
    expect(stdout).toMatch(/^persistentvolumeclaim\/hyperspool-postgres-data serverside-applied \(server dry run\)$/m);
    expect(stdout).toMatch(/^deployment.apps\/hyperspool-postgres serverside-applied \(server dry run\)$/m);
    expect(stdout).toMatch(/^secret\/hyperspool-db-[a-z0-9]{10} serverside-applied \(server dry run\)$/m);
    // Pod Security admission warns about a workload whose pods the namespace's level would refuse.
    expect(stderr).not.toMatch(/PodSecurity/);
  });
});
