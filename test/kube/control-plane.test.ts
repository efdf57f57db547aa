import { AuthenticationV1Api, CoreV1Api, VersionApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane, type ControlPlane } from '../support/kube.js';

/**
 * The test control plane (test/support/kube.ts) is a real kube-apiserver: it serves the API,
 * issues and reviews service account tokens for the `hyperspool` audience, and keeps its data in
 * etcd across a restart of the API server.
 */
describe('test Kubernetes control plane', () => {
  let plane: ControlPlane;

  // Long: when the pinned binaries are not built yet, startControlPlane builds them first.
  beforeAll(async () => {
    plane = await startControlPlane();
  }, 45 * 60_000);

  afterAll(async () => {
    await plane?.stop();
  });

  it('answers /version with the pinned release', async () => {
    const version = await plane.kubeConfig().makeApiClient(VersionApi).getCode();
    expect(version.gitVersion).toMatch(/^v1\.\d+\.\d+$/);
    expect(plane.server).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  });

  it('creates a namespace', async () => {
    const core = plane.kubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'created-here' } } });
    const namespace = await core.readNamespace({ name: 'created-here' });
    expect(namespace.status?.phase).toBe('Active');
  });

  it('issues service account tokens for the hyperspool audience that TokenReview accepts', async () => {
    const config = plane.kubeConfig();
    const core = config.makeApiClient(CoreV1Api);
    const auth = config.makeApiClient(AuthenticationV1Api);
    await core.createNamespace({ body: { metadata: { name: 'tokens' } } });
    await core.createNamespacedServiceAccount({ namespace: 'tokens', body: { metadata: { name: 'runner' } } });

    const request = await core.createNamespacedServiceAccountToken({
      name: 'runner',
      namespace: 'tokens',
      body: { spec: { audiences: ['hyperspool'], expirationSeconds: 600 } },
    });
    const token = request.status?.token;
    expect(token).toBeTruthy();

    const review = (reviewed: string, audiences: string[]) =>
      auth.createTokenReview({ body: { spec: { token: reviewed, audiences } } });

    const accepted = await review(token ?? '', ['hyperspool']);
    expect(accepted.status?.authenticated).toBe(true);
    expect(accepted.status?.user?.username).toBe('system:serviceaccount:tokens:runner');
    expect(accepted.status?.audiences).toEqual(['hyperspool']);

    const madeUp = await review('made.up.token', ['hyperspool']);
    expect(madeUp.status?.authenticated).not.toBe(true);

    // A real token, but for another audience than the one asked for.
    const otherAudience = await review(token ?? '', ['someone-else']);
    expect(otherAudience.status?.authenticated).not.toBe(true);
  });

  it('keeps its data across restartApiServer()', async () => {
    const before = plane.kubeConfig().makeApiClient(CoreV1Api);
    await before.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'survivor' }, data: { kept: 'yes' } },
    });

    await plane.restartApiServer();

    const after = plane.kubeConfig().makeApiClient(CoreV1Api);
    const configMap = await after.readNamespacedConfigMap({ name: 'survivor', namespace: 'default' });
    expect(configMap.data).toEqual({ kept: 'yes' });
    const version = await plane.kubeConfig().makeApiClient(VersionApi).getCode();
    expect(version.gitVersion).toMatch(/^v1\./);
  });
});
