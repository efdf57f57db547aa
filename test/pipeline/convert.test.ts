import { describe, expect, it } from 'vitest';
import { MAX_FAN_OUT_ITEMS } from '../../src/pipeline/defaults.js';
import { parsePipeline } from '../../src/pipeline/parse.js';
import schema from '../../src/pipeline/schema.json' with { type: 'json' };

const doc = (...lines: string[]) => `${lines.join('\n')}\n`;
const jobs = (text: string) => parsePipeline(text, 'p.yaml').jobs;

describe('shorthands and defaults', () => {
  it('reads depends_on: x as [x]', () => {
    const [, b] = jobs(doc('name: x', 'jobs:', '  a:', '    script: x', '  b:', '    depends_on: a', '    script: y'));
    expect(b?.dependsOn).toEqual(['a']);
  });

  it('reads retry: N as N retries after the first attempt, and the map form as attempts in all', () => {
    const text = doc(
      'name: x',
      'jobs:',
      '  a:',
      '    script: x',
      '    retry: 2',
      '  b:',
      '    script: x',
      '    retry: {attempts: 5, backoff: 2s}',
      '  c:',
      '    script: x',
      '    retry: {attempts: 1}',
      '  d:',
      '    script: x',
    );
    expect(jobs(text).map((job) => job.retry)).toEqual([
      { attempts: 3, backoffMs: 1000 },
      { attempts: 5, backoffMs: 2000 },
      { attempts: 1, backoffMs: 1000 },
      null,
    ]);
  });

  it('reads a fan_out: rate as limit/period or a map, items as a list or an expression', () => {
    const text = doc(
      'name: probes',
      'jobs:',
      '  regions:',
      '    script: echo eu-north us-east',
      '  probe:',
      '    depends_on: regions',
      '    fan_out:',
      '      items: ${{ steps.regions.output.list }}',
      '      max_parallel: 2',
      '      rate: 10/1m',
      '      steps:',
      '        - name: probe',
      '          run: echo "${{ item.region }} for ${{ input.who }}"',
      '  notify:',
      '    fan_out:',
      '      items: [{who: ann}, {who: bo}]',
      '      rate: {limit: 1, period: 500ms}',
      '      workflow: notify.yaml',
    );
    const [, probe, notify] = jobs(text);
    expect(probe?.fanOut).toEqual({
      items: '${{ steps.regions.output.list }}',
      maxParallel: 2,
      rate: { limit: 10, periodMs: 60_000 },
      steps: [{ name: 'probe', run: 'echo "${{ item.region }} for ${{ input.who }}"' }],
      workflow: null,
    });
    expect(notify?.fanOut).toEqual({
      items: [{ who: 'ann' }, { who: 'bo' }],
      maxParallel: null,
      rate: { limit: 1, periodMs: 500 },
      steps: null,
      workflow: 'notify.yaml',
    });
  });

  it('fills concurrency and throttle defaults, and reads compound durations', () => {
    const text = doc(
      'name: sync',
      'concurrency:',
      "  group: 'sync-${{ input.branch }}'",
      'throttle:',
      '  limit: 2',
      '  period: 1h30m',
      '  burst: 3',
      '  policy: drop',
      'jobs:',
      '  gate:',
      '    approval:',
      '      prompt: "Sync ${{ input.branch }}?"',
      '  sync:',
      '    depends_on: [gate]',
      '    concurrency:',
      '      group: sync-db',
      '    script: |',
      '      spool step sync -- echo "${{ steps.gate.output.approved }}"',
    );
    const pipeline = parsePipeline(text, 'p.yaml');
    expect(pipeline.concurrency).toEqual({ group: 'sync-${{ input.branch }}', policy: 'queue' });
    expect(pipeline.throttle).toEqual({ limit: 2, periodMs: 5_400_000, key: 'sync', burst: 3, policy: 'drop' });
    expect(pipeline.jobs[0]?.approval).toEqual({ prompt: 'Sync ${{ input.branch }}?', timeout: null, form: [], notify: null, approvers: null });
    expect(pipeline.jobs[1]?.concurrency).toEqual({ group: 'sync-db', policy: 'queue' });
    expect(pipeline.jobs[1]?.script).toBe('spool step sync -- echo "${{ steps.gate.output.approved }}"\n');
  });

  it('reads a number field’s min and max, and refuses them on other types, min above max and a default outside them', () => {
    const gate = (field: string) => doc('name: x', 'jobs:', '  ask:', '    approval:', '      prompt: ok?', '      form:', `        amount: ${field}`);
    const [ask] = jobs(gate('{ type: number, min: 0, max: 10000, default: 480 }'));
    expect(ask?.approval?.form).toEqual([{ name: 'amount', type: 'number', label: 'amount', required: false, default: 480, options: null, min: 0, max: 10000 }]);
    expect(jobs(gate('{ type: number }'))[0]?.approval?.form[0]).toMatchObject({ min: null, max: null });
    expect(() => jobs(gate('{ type: string, min: 1 }'))).toThrow("'min' belongs to a field of type number, not string");
    expect(() => jobs(gate('{ type: number, min: 5, max: 1 }'))).toThrow("the min of form field 'amount' (5) is above its max (1)");
    expect(() => jobs(gate('{ type: number, min: 0, default: -5 }'))).toThrow("the default of form field 'amount' (-5) is outside its bounds (0 to …)");
    expect(() => jobs(gate('{ type: number, min: low }'))).toThrow();
  });

  it('reads approvers: a count of people and groups; a group may hold any number, so a count above the names it lists is taken', () => {
    const gate = (count: number, from: string) => doc('name: x', 'jobs:', '  ask:', '    approval:', '      prompt: ok?', '      approvers:', `        count: ${count}`, `        from: ${from}`);
    expect(jobs(gate(2, '[alice, bob]'))[0]?.approval?.approvers).toEqual({ count: 2, from: ['alice', 'bob'] });
    expect(jobs(gate(5, '[alice, "group:release"]'))[0]?.approval?.approvers).toEqual({ count: 5, from: ['alice', 'group:release'] });
  });

  it('follows YAML anchors and aliases', () => {
    const text = doc(
      'name: x',
      'jobs:',
      '  a:',
      '    steps: &build',
      '      - name: build',
      '        run: make',
      '  b:',
      '    steps: *build',
    );
    expect(jobs(text).map((job) => job.steps)).toEqual([
      [{ name: 'build', run: 'make' }],
      [{ name: 'build', run: 'make' }],
    ]);
  });

  it('caps literal fan_out items in the schema at MAX_FAN_OUT_ITEMS, the cap for computed lists too', () => {
    expect(schema.definitions.fanOutItems.else.maxItems).toBe(MAX_FAN_OUT_ITEMS);
  });
});
