import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/server/app.js';
import { listen } from '../../src/server/listen.js';
import { openPgliteStore } from '../../src/store/pglite.js';
import type { SqlStore } from '../../src/store/sql-store.js';

/**
 * On a cluster (the operator's API: triggersAreResources), Handlers and Schedules are resources the
 * operator writes into the store, so the API refuses to set, delete, suspend or resume them, in one
 * line saying what to do with kubectl; a page's Suspend button reaching the operator through the
 * aggregated API gets that line, and the store is left as it was.
 */

let store: SqlStore;
let api: Server;
let url: string;

beforeAll(async () => {
  store = await openPgliteStore();
  const context = { store, env: 'k8s', defaultProject: 'default', triggersAreResources: true, now: () => new Date(), poke: () => undefined, abortPass: () => undefined };
  api = await listen(createApp(context), 0, '127.0.0.1', '--port');
  const address = api.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/v1`;
  await store.putSchedule({ project: 'default', name: 'nightly', everyMs: 60_000, cron: null, workflow: 'n.sh', interpreter: 'bash', script: 'true', cwd: null, nextAt: new Date(Date.now() + 60_000) });
}, 60_000);
afterAll(async () => {
  api?.close();
  await store?.close();
});

const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; error: { code: string; message: string } }> => {
  const response = await fetch(`${url}${path}`, { method, headers: { 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
  return { status: response.status, error: ((await response.json()) as { error: { code: string; message: string } }).error };
};

describe('handlers and schedules on a cluster', () => {
  it('refuses to suspend or resume a schedule, naming the kubectl patch that does, and leaves it ticking', async () => {
    const suspend = await call('POST', '/schedules/nightly/suspend');
    expect(suspend.status).toBe(409);
    expect(suspend.error).toEqual({
      code: 'managed_by_resource',
      message: `on a cluster, a Schedule's spec.suspend says whether it ticks: kubectl patch schedule nightly --type merge -p '{"spec":{"suspend":true}}' (false to resume)`,
    });
    expect((await call('POST', '/schedules/nightly/resume')).status).toBe(409);
    expect((await store.listSchedules('default'))[0]?.suspendedAt ?? null).toBeNull();
  });

  it('refuses to set or delete a schedule or a handler: each is a resource to kubectl apply or delete', async () => {
    const source = { workflow: 'n.sh', interpreter: 'bash -eu', script: 'true' };
    const put = await call('PUT', '/schedules/other', { ...source, everyMs: 60_000 });
    expect([put.status, put.error.message]).toEqual([409, 'on a cluster, schedule other is a Schedule resource: kubectl apply or delete it (docs/crds.md)']);
    expect((await call('DELETE', '/schedules/nightly')).status).toBe(409);
    const handler = await call('PUT', '/handlers/orders', { ...source, eventType: 'order.paid' });
    expect([handler.status, handler.error.message]).toEqual([409, 'on a cluster, handler orders is a Handler resource: kubectl apply or delete it (docs/crds.md)']);
    expect((await call('DELETE', '/handlers/orders')).status).toBe(409);
    expect((await store.listSchedules('default')).map((schedule) => schedule.name)).toEqual(['nightly']);
    expect(await store.listHandlers('default')).toEqual([]);
  });
});
