import { randomBytes } from 'node:crypto';
import { CoreV1Api, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startInformer, type Informer, type InformerOptions } from '../../../src/operator/kube/informer.js';
import { startControlPlane, type ControlPlane } from '../../support/kube.js';
import { startPartitionProxy, type PartitionProxy } from './partition-proxy.js';

/** Everything an informer told its handlers, in order. */
interface Seen {
  events: string[];
  deletes: { name: string; finalStateUnknown: boolean }[];
  errors: Error[];
  lists: number;
  /** Why each list that landed was made (onRelist). */
  relists: string[];
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function configMap(name: string, value = 'v1'): V1ConfigMap {
  return { metadata: { name, labels: { test: 'informer' } }, data: { value } };
}

describe('informer against a real kube-apiserver', () => {
  let plane: ControlPlane;
  let kubeConfig: KubeConfig;
  let core: CoreV1Api;
  const informers: Informer<V1ConfigMap>[] = [];
  const proxies: PartitionProxy[] = [];

  beforeAll(async () => {
    plane = await startControlPlane();
    kubeConfig = plane.kubeConfig();
    core = kubeConfig.makeApiClient(CoreV1Api);
  }, 600_000);

  afterEach(async () => {
    await Promise.all(informers.splice(0).map((informer) => informer.stop()));
    await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
  });

  afterAll(async () => {
    await plane?.stop();
  });

  async function freshNamespace(): Promise<string> {
    const namespace = `informer-${randomBytes(4).toString('hex')}`;
    await core.createNamespace({ body: { metadata: { name: namespace, labels: { test: 'informer' } } } });
    return namespace;
  }

  function watchConfigMaps(
    namespace: string,
    seen: Seen,
    options: Partial<InformerOptions<V1ConfigMap>> = {},
    config: KubeConfig = kubeConfig,
  ): Informer<V1ConfigMap> {
    const api = config.makeApiClient(CoreV1Api);
    const informer = startInformer<V1ConfigMap>({
      kubeConfig: config,
      path: `/api/v1/namespaces/${namespace}/configmaps`,
      // Counts the lists that answered: failed attempts during a partition are the backoff's business.
      list: async (query) => {
        const listed = await api.listNamespacedConfigMap({ namespace, ...query });
        seen.lists += 1;
        return listed;
      },
      onAdd: (object) => seen.events.push(`add ${object.metadata?.name} ${object.data?.value}`),
      onUpdate: (object) => seen.events.push(`update ${object.metadata?.name} ${object.data?.value}`),
      onDelete: (object, info) => {
        seen.events.push(`delete ${object.metadata?.name}`);
        seen.deletes.push({ name: object.metadata?.name ?? '', finalStateUnknown: info.finalStateUnknown });
      },
      onError: (error) => seen.errors.push(error),
      onRelist: (reason) => seen.relists.push(reason),
      ...options,
    });
    informers.push(informer);
    return informer;
  }

  const newSeen = (): Seen => ({ events: [], deletes: [], errors: [], lists: 0, relists: [] });

  /** The cache holds exactly what the API server holds, value for value. */
  async function converged(informer: Informer<V1ConfigMap>, namespace: string): Promise<boolean> {
    const truth = await core.listNamespacedConfigMap({ namespace });
    const want = truth.items.map((each) => `${each.metadata?.name}=${each.data?.value}`).sort();
    const have = informer.list(namespace).map((each) => `${each.metadata?.name}=${each.data?.value}`).sort();
    return JSON.stringify(want) === JSON.stringify(have);
  }

  it('lists what exists, then sees adds, updates and deletes', async () => {
    const namespace = await freshNamespace();
    await core.createNamespacedConfigMap({ namespace, body: configMap('before') });
    const seen = newSeen();
    const informer = watchConfigMaps(namespace, seen);
    expect(await informer.waitForSync()).toBe(true);
    expect(informer.hasSynced()).toBe(true);
    expect(seen.events).toEqual(['add before v1']);

    await core.createNamespacedConfigMap({ namespace, body: configMap('a') });
    await until('add a', () => informer.get(namespace, 'a') !== undefined);
    await core.replaceNamespacedConfigMap({ name: 'a', namespace, body: configMap('a', 'v2') });
    await until('update a', () => informer.getByKey(`${namespace}/a`)?.data?.value === 'v2');
    await core.deleteNamespacedConfigMap({ name: 'before', namespace });
    await until('delete before', () => informer.get(namespace, 'before') === undefined);

    expect(seen.events).toEqual(['add before v1', 'add a v1', 'update a v2', 'delete before']);
    expect(seen.deletes).toEqual([{ name: 'before', finalStateUnknown: false }]);
    expect(informer.list().map((each) => each.metadata?.name)).toEqual(['a']);
    expect(informer.list('elsewhere')).toEqual([]);
    expect(Number(informer.resourceVersion)).toBeGreaterThan(0);
    expect(seen.errors).toEqual([]);
  });

  it('re-establishes a watch the server closes, without losing or repeating events and without relisting', async () => {
    const namespace = await freshNamespace();
    const seen = newSeen();
    // The server ends each watch after a second, so the writes below straddle many reconnects.
    const informer = watchConfigMaps(namespace, seen, { watchTimeoutSeconds: 1 });
    await informer.waitForSync();
    const names: string[] = [];
    const started = Date.now();
    for (let index = 0; Date.now() - started < 4_500; index += 1) {
      const name = `cm-${String(index).padStart(3, '0')}`;
      names.push(name);
      await core.createNamespacedConfigMap({ namespace, body: configMap(name) });
      if (index % 3 === 1) await core.replaceNamespacedConfigMap({ name, namespace, body: configMap(name, 'v2') });
      if (index % 5 === 2) await core.deleteNamespacedConfigMap({ name, namespace });
      await new Promise((resolve) => setTimeout(resolve, 60));
    }
    await until('the cache to converge', () => converged(informer, namespace));
    const expected = names.flatMap((name, index) => [
      `add ${name} v1`,
      ...(index % 3 === 1 ? [`update ${name} v2`] : []),
      ...(index % 5 === 2 ? [`delete ${name}`] : []),
    ]);
    await until('every event', () => seen.events.length >= expected.length);
    expect(seen.events).toEqual(expected);
    expect(seen.lists).toBe(1);
    expect(seen.relists).toEqual(['start']);
    expect(seen.errors).toEqual([]);
  });

  it('relists after the API server restarts and reports what changed meanwhile, deletions included', async () => {
    const namespace = await freshNamespace();
    for (const name of ['keep', 'doomed', 'changed']) await core.createNamespacedConfigMap({ namespace, body: configMap(name) });
    const seen = newSeen();
    // A fixed 1.5 s retry makes the writes below land while the informer is still waiting to reconnect.
    const informer = watchConfigMaps(namespace, seen, { backoff: { initialMs: 1500, maxMs: 3000, jitter: 0 } });
    await informer.waitForSync();
    seen.events.length = 0;

    await plane.restartApiServer();
    await core.createNamespacedConfigMap({ namespace, body: configMap('born') });
    await core.deleteNamespacedConfigMap({ name: 'doomed', namespace });
    await core.replaceNamespacedConfigMap({ name: 'changed', namespace, body: configMap('changed', 'v2') });

    await until('the cache to converge', () => converged(informer, namespace));
    await until('the delete handler', () => seen.deletes.length === 1);
    expect(seen.deletes.map((each) => each.name)).toEqual(['doomed']);
    expect([...seen.events].sort()).toEqual(['add born v1', 'delete doomed', 'update changed v2']);
    expect(informer.get(namespace, 'doomed')).toBeUndefined();
    expect(seen.errors.length).toBeGreaterThan(0);
    // The relist came of a broken watch (or of one whose resourceVersion the restart compacted away).
    expect(seen.relists[0]).toBe('start');
    expect(seen.relists.length).toBeGreaterThan(1);
    for (const reason of seen.relists.slice(1)) expect(['error', 'expired']).toContain(reason);

    // And it keeps watching afterwards.
    await core.createNamespacedConfigMap({ namespace, body: configMap('after') });
    await until('add after', () => informer.get(namespace, 'after') !== undefined);
  });

  it('diffs the relist against its cache after a partition: objects deleted meanwhile are reported deleted', async () => {
    const namespace = await freshNamespace();
    for (const name of ['keep', 'doomed', 'changed']) await core.createNamespacedConfigMap({ namespace, body: configMap(name) });
    const proxy = await startPartitionProxy(() => plane.kubeConfig());
    proxies.push(proxy);
    const seen = newSeen();
    // Two a page: the deletion is found by a relist read in pages.
    const informer = watchConfigMaps(namespace, seen, { backoff: { initialMs: 200, maxMs: 400 }, pageSize: 2 }, proxy.kubeConfig);
    await informer.waitForSync();
    seen.events.length = 0;

    proxy.cut();
    await until('the informer to notice', () => seen.errors.length > 0);
    await core.createNamespacedConfigMap({ namespace, body: configMap('born') });
    await core.deleteNamespacedConfigMap({ name: 'doomed', namespace });
    await core.replaceNamespacedConfigMap({ name: 'changed', namespace, body: configMap('changed', 'v2') });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(seen.events).toEqual([]);
    expect(informer.get(namespace, 'doomed')).toBeDefined();
    proxy.heal();

    await until('the cache to converge', () => converged(informer, namespace));
    expect([...seen.events].sort()).toEqual(['add born v1', 'delete doomed', 'update changed v2']);
    // The deletion happened where no watch could see it: the relist found it missing.
    expect(seen.deletes).toEqual([{ name: 'doomed', finalStateUnknown: true }]);
    // Two lists of three objects, two pages each.
    expect(seen.lists).toBe(4);
    // Each list said why it was made: the first, then the one the failed watch called for.
    expect(seen.relists).toEqual(['start', 'error']);
  });

  it('resyncs periodically: every object is reported again, changed or not', async () => {
    const namespace = await freshNamespace();
    for (const name of ['x', 'y']) await core.createNamespacedConfigMap({ namespace, body: configMap(name) });
    const seen = newSeen();
    const informer = watchConfigMaps(namespace, seen, { resyncPeriodMs: 1000 });
    await informer.waitForSync();
    await until('two resyncs', () => seen.lists >= 3, 10_000);
    const updates = seen.events.filter((event) => event.startsWith('update'));
    expect(updates.filter((event) => event === 'update x v1').length).toBeGreaterThanOrEqual(2);
    expect(updates.filter((event) => event === 'update y v1').length).toBeGreaterThanOrEqual(2);
    expect(seen.events.filter((event) => !event.startsWith('update')).sort()).toEqual(['add x v1', 'add y v1']);
    expect(seen.errors).toEqual([]);
    expect(seen.relists.slice(0, 3)).toEqual(['start', 'resync', 'resync']);
  });

  it('reads its lists in pages, and a relist keeps one cache: an object unchanged stays the object cached', async () => {
    const namespace = await freshNamespace();
    for (let index = 0; index < 7; index += 1) await core.createNamespacedConfigMap({ namespace, body: configMap(`cm-${index}`) });
    const seen = newSeen();
    const pages: { limit?: number; from?: string; items: number }[] = [];
    const informer = watchConfigMaps(namespace, seen, {
      pageSize: 3,
      resyncPeriodMs: 1500,
      list: async (query) => {
        const listed = await core.listNamespacedConfigMap({ namespace, ...query });
        pages.push({ limit: query.limit, from: query._continue, items: listed.items.length });
        seen.lists += 1;
        return listed;
      },
    });
    await informer.waitForSync();
    // The API server answered three pages of at most three, each after the one before.
    expect(pages.map(({ limit, items }) => [limit, items])).toEqual([[3, 3], [3, 3], [3, 1]]);
    expect(pages[0]?.from).toBeUndefined();
    expect(pages.slice(1).every((page) => typeof page.from === 'string' && page.from.length > 0)).toBe(true);
    expect(informer.list(namespace)).toHaveLength(7);
    expect(seen.events.filter((event) => event.startsWith('add'))).toHaveLength(7);

    const unchanged = informer.get(namespace, 'cm-0');
    await core.replaceNamespacedConfigMap({ name: 'cm-1', namespace, body: configMap('cm-1', 'v2') });
    await until('a resync', () => seen.relists.includes('resync'), 10_000);
    // Not a copy made beside the cache: the very object, as nothing changed it.
    expect(informer.get(namespace, 'cm-0')).toBe(unchanged);
    expect(informer.get(namespace, 'cm-1')?.data?.value).toBe('v2');
    expect(informer.list(namespace)).toHaveLength(7);
    expect(pages.length).toBeGreaterThanOrEqual(6);
    expect(seen.errors).toEqual([]);
  });

  it('stop ends the watch: no handler runs afterwards', async () => {
    const namespace = await freshNamespace();
    const seen = newSeen();
    const informer = watchConfigMaps(namespace, seen);
    await informer.waitForSync();
    await informer.stop();
    await core.createNamespacedConfigMap({ namespace, body: configMap('late') });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(seen.events).toEqual([]);
  });

  it('an informer stopped before its first sync says it never synced', async () => {
    const seen = newSeen();
    const informer = startInformer<V1ConfigMap>({
      kubeConfig,
      path: '/api/v1/namespaces/nowhere/configmaps',
      list: () => new Promise(() => undefined),
    });
    informers.push(informer);
    await informer.stop();
    expect(await informer.waitForSync()).toBe(false);
    expect(seen.events).toEqual([]);
  });
});
