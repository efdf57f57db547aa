import { describe, expect, it } from 'vitest';
import type { Handler, Run, Schedule, Workflow } from '../../src/operator/api/generated.js';
import { expiredRuns, type RetentionLookups } from '../../src/operator/runs/retention.js';

const NOW = new Date('2026-12-03T12:00:00Z');
const ago = (seconds: number): string => new Date(NOW.getTime() - seconds * 1000).toISOString();

function run(
  name: string,
  phase: string,
  finished: number | null,
  extra: { labels?: Record<string, string>; ttl?: number; workflow?: string } = {},
): Run {
  return {
    apiVersion: 'hyperspool.dev/v1alpha1',
    kind: 'Run',
    metadata: {
      name,
      namespace: 'ns',
      labels: { 'hyperspool.dev/run': `run-${name.padEnd(16, '0').slice(0, 16)}`, ...extra.labels },
    },
    spec: {
      workflowRef: { name: extra.workflow ?? 'wf' },
      ...(extra.ttl !== undefined ? { ttlSecondsAfterFinished: extra.ttl } : {}),
    },
    status: {
      runId: `k8s:ns:${name}`,
      phase: phase as never,
      ...(finished !== null ? { finishedAt: ago(finished) } : {}),
    },
  };
}

const lookups = (
  over: Partial<RetentionLookups> & {
    workflows?: Record<string, Workflow['spec']>;
    handlers?: Record<string, Handler['spec']>;
    schedules?: Record<string, Schedule['spec']>;
  } = {},
): RetentionLookups => ({
  workflow: (_ns, name) =>
    over.workflows?.[name] ? ({ metadata: { name }, spec: over.workflows[name] } as Workflow) : undefined,
  handler: (_ns, name) =>
    over.handlers?.[name] ? ({ metadata: { name }, spec: over.handlers[name] } as Handler) : undefined,
  schedule: (_ns, name) =>
    over.schedules?.[name] ? ({ metadata: { name }, spec: over.schedules[name] } as Schedule) : undefined,
  defaultTtlSeconds: over.defaultTtlSeconds === undefined ? null : over.defaultTtlSeconds,
});

const names = (expired: { run: Run }[]): string[] => expired.map(({ run }) => run.metadata.name ?? '').sort();

describe('which finished Runs retention deletes', () => {
  it("takes the Run's ttl over its Workflow's over the operator's, and never touches an unfinished run", () => {
    const runs = [
      run('own', 'Succeeded', 20, { ttl: 10, workflow: 'long' }),
      run('own-young', 'Succeeded', 5, { ttl: 10 }),
      run('wf', 'Failed', 70, { workflow: 'short' }),
      run('wf-zero', 'Cancelled', 0, { workflow: 'zero' }),
      run('default', 'Succeeded', 4000),
      run('default-young', 'Succeeded', 100),
      run('waiting', 'Waiting', null, { ttl: 0 }),
    ];
    const workflows = {
      long: { filename: 'a.sh', script: 'x', ttlSecondsAfterFinished: 100_000 },
      short: { filename: 'a.sh', script: 'x', ttlSecondsAfterFinished: 60 },
      zero: { filename: 'a.sh', script: 'x', ttlSecondsAfterFinished: 0 },
    };
    expect(names(expiredRuns(runs, lookups({ workflows, defaultTtlSeconds: 3600 }), NOW))).toEqual([
      'default',
      'own',
      'wf',
      'wf-zero',
    ]);
    // No default (--run-ttl never): only what a Run or Workflow says.
    expect(names(expiredRuns(runs, lookups({ workflows }), NOW))).toEqual(['own', 'wf', 'wf-zero']);
  });

  it('keeps the newest N succeeded and M failed Runs of each Handler and Schedule, counting cancelled as failed; a trigger without limits keeps all', () => {
    const of = (trigger: string, kind: 'handler' | 'schedule') => ({ labels: { [`hyperspool.dev/${kind}`]: trigger } });
    const runs = [
      run('h-ok-1', 'Succeeded', 50, of('h', 'handler')),
      run('h-ok-2', 'Succeeded', 40, of('h', 'handler')),
      run('h-ok-3', 'Succeeded', 30, of('h', 'handler')),
      run('h-bad-1', 'Failed', 45, of('h', 'handler')),
      run('h-bad-2', 'Cancelled', 35, of('h', 'handler')),
      run('h-live', 'Running', null, of('h', 'handler')),
      run('s-ok-1', 'Succeeded', 20, of('s', 'schedule')),
      run('s-ok-2', 'Succeeded', 10, of('s', 'schedule')),
      run('free-1', 'Succeeded', 10, of('free', 'handler')),
    ];
    const expired = expiredRuns(
      runs,
      lookups({
        handlers: {
          h: { event: 'e', workflowRef: { name: 'wf' }, successfulRunsHistoryLimit: 2, failedRunsHistoryLimit: 1 },
          free: { event: 'e', workflowRef: { name: 'wf' } },
        },
        schedules: { s: { every: '1m', workflowRef: { name: 'wf' }, successfulRunsHistoryLimit: 0 } },
      }),
      NOW,
    );
    expect(names(expired)).toEqual(['h-bad-1', 'h-ok-1', 's-ok-1', 's-ok-2']);
    expect(expired.find(({ run: r }) => r.metadata.name === 'h-ok-1')?.reason).toBe(
      'succeeded history limit 2 of Handler h',
    );
  });

  it('keeps a finished parent while one of its child runs has not finished (their Runs would go with it)', () => {
    const parent = run('parent', 'Succeeded', 100, { ttl: 1 });
    const key = parent.metadata.labels?.['hyperspool.dev/run'] ?? '';
    const child = run('child', 'Waiting', null, { labels: { 'hyperspool.dev/parent': key } });
    expect(expiredRuns([parent, child], lookups(), NOW)).toEqual([]);
    const done = run('child', 'Succeeded', 50, { labels: { 'hyperspool.dev/parent': key } });
    expect(names(expiredRuns([parent, done], lookups(), NOW))).toEqual(['parent']);
  });
});
