import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { accessOf } from '../../src/server/access.js';

/** The access the workflows routes ask of a cluster's authorizer (src/server/access.ts). */

const request = (method: string, path: string): Request => ({ method, path, body: {}, query: {} }) as unknown as Request;

describe('the access the workflows routes need', () => {
  it("listing them, or one workflow's stats, is list workflows; one workflow, whose answer holds its script, is get workflows with its name", () => {
    expect(accessOf(request('GET', '/workflows'), 'default')).toEqual({ verb: 'list', resource: 'workflows', project: 'default' });
    expect(accessOf(request('GET', '/workflows/refund.yaml/stats'), 'default')).toEqual({ verb: 'list', resource: 'workflows', project: 'default' });
    expect(accessOf(request('GET', '/workflows/refund.yaml'), 'default')).toEqual({ verb: 'get', resource: 'workflows', project: 'default', name: 'refund.yaml' });
    expect(accessOf(request('GET', '/workflows/examples%2Frefund.yaml'), 'default')).toEqual({ verb: 'get', resource: 'workflows', project: 'default', name: 'examples/refund.yaml' });
  });
});

describe('the access the approvals waiting and the schedules and handlers actions need', () => {
  it('the approvals waiting across runs is list runs; suspending, resuming and a handler’s events name the schedule or handler', () => {
    expect(accessOf(request('GET', '/approvals/waiting'), 'team-a')).toEqual({ verb: 'list', resource: 'runs', project: 'team-a' });
    expect(accessOf(request('POST', '/schedules/nightly/suspend'), 'default')).toEqual({ verb: 'update', resource: 'schedules', project: 'default', name: 'nightly' });
    expect(accessOf(request('POST', '/schedules/nightly/resume'), 'default')).toEqual({ verb: 'update', resource: 'schedules', project: 'default', name: 'nightly' });
    expect(accessOf(request('GET', '/handlers/orders/events'), 'default')).toEqual({ verb: 'get', resource: 'handlers', project: 'default', name: 'orders' });
  });
});
