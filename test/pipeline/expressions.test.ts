import { describe, expect, it } from 'vitest';
import {
  ExpressionError,
  evaluate,
  evaluateCondition,
  interpolate,
  isExpression,
  parseExpression,
  references,
  truthy,
} from '../../src/pipeline/expressions.js';
import type { ExpressionScope, Pipeline } from '../../src/pipeline/types.js';
import { fixture } from './fixtures.js';

const scope = (fields: Partial<ExpressionScope> = {}): ExpressionScope => ({ input: {}, steps: {}, ...fields });
const value = (src: string, s: ExpressionScope = scope()) => evaluate(parseExpression(src), s);

/**
 * Runs the refund graph the way docs/pipelines.md says: in document order (which is a topological
 * order here), a job whose `if` is false is skipped and shows an empty output; the approval gates
 * answer from `gates`. Returns the jobs that ran.
 */
function jobsThatRan(pipeline: Pipeline, gates: Record<string, { approved: boolean; timed_out: boolean }>): string[] {
  const steps: ExpressionScope['steps'] = {};
  const ran: string[] = [];
  for (const job of pipeline.jobs) {
    if (job.if !== null && !evaluateCondition(job.if, { input: {}, steps })) {
      steps[job.name] = { output: {}, status: 'skipped' };
      continue;
    }
    ran.push(job.name);
    steps[job.name] = { output: job.approval ? { ...gates[job.name] } : {}, status: 'succeeded' };
  }
  return ran;
}

describe('the refund conditions', () => {
  const refund = fixture('refund');

  it('ask approved: ask, refund', () => {
    expect(jobsThatRan(refund, { ask: { approved: true, timed_out: false } })).toEqual(['ask', 'refund']);
  });

  it('ask timed out, ask_lead approved: ask, escalate, ask_lead, refund', () => {
    const gates = { ask: { approved: false, timed_out: true }, ask_lead: { approved: true, timed_out: false } };
    expect(jobsThatRan(refund, gates)).toEqual(['ask', 'escalate', 'ask_lead', 'refund']);
  });

  it('both timed out: ask, escalate, ask_lead, give_up', () => {
    const gates = { ask: { approved: false, timed_out: true }, ask_lead: { approved: false, timed_out: true } };
    expect(jobsThatRan(refund, gates)).toEqual(['ask', 'escalate', 'ask_lead', 'give_up']);
  });

  it.each([
    // ask.timed_out, ask_lead.timed_out (undefined: ask_lead skipped), refund's if, give_up's if
    [false, undefined, true, false],
    [true, false, true, false],
    [true, true, false, true],
  ])('ask timed out %s, ask_lead timed out %s: refund %s, give_up %s', (ask, lead, refund, giveUp) => {
    const s = scope({
      steps: {
        ask: { output: { timed_out: ask } },
        ask_lead: lead === undefined ? { output: {}, status: 'skipped' } : { output: { timed_out: lead } },
      },
    });
    expect(evaluateCondition('${{ !steps.ask.output.timed_out || !steps.ask_lead.output.timed_out }}', s)).toBe(refund);
    expect(evaluateCondition('${{ steps.ask.output.timed_out && steps.ask_lead.output.timed_out }}', s)).toBe(giveUp);
  });
});

describe('interpolate', () => {
  it('fills in the throttle key of enrich', () => {
    expect(interpolate('crm-${{ input.tenant }}', scope({ input: { tenant: 'acme' } }))).toBe('crm-acme');
  });

  it('writes null and missing data as nothing, lists and maps as JSON, numbers and booleans as text', () => {
    const s = scope({ input: { n: 3, ok: true, list: [1, 'a'], map: { a: null } } });
    expect(interpolate('[${{ input.tenant }}]', s)).toBe('[]');
    expect(interpolate('${{ input.n }} ${{ input.ok }} ${{ input.list }} ${{ input.map }}', s)).toBe(
      '3 true [1,"a"] {"a":null}',
    );
  });

  it('ends an expression at the first }} outside a string', () => {
    expect(interpolate("a${{ input.x || '}}' }}b", scope())).toBe('a}}b');
  });

  it('leaves text without expressions alone', () => {
    expect(interpolate('echo "$(date +%T)" {{ x }}', scope())).toBe('echo "$(date +%T)" {{ x }}');
  });

  it('refuses an unclosed ${{', () => {
    expect(() => interpolate('echo ${{ input.x', scope())).toThrow(
      "'${{' is never closed; expected '}}' (column 6 of 'echo ${{ input.x')",
    );
  });
});

describe('evaluate', () => {
  const s = scope({
    input: { a: { b: 'x' }, n: 0, list: ['p', 'q'], 'with-dash': 1 },
    steps: { ask: { output: { timed_out: false, approved: true }, status: 'succeeded' } },
    item: { region: 'eu-north' },
  });

  it('reads paths, and null wherever something is missing', () => {
    expect(value('input.a.b', s)).toBe('x');
    expect(value("input['with-dash']", s)).toBe(1);
    expect(value('input.list[1]', s)).toBe('q');
    expect(value('steps.ask.output.approved', s)).toBe(true);
    expect(value('steps.ask.status', s)).toBe('succeeded');
    expect(value('item.region', s)).toBe('eu-north');
    for (const missing of [
      'input.nope',
      'input.a.b.c',
      'input.list[5]',
      'input.list.p',
      'steps.other.output.x',
      'steps.ask.output.nope',
      'item.x.y',
    ]) {
      expect(value(missing, s), missing).toBeNull();
    }
    expect(value('item', scope())).toBeNull();
    expect(value('input.x', { input: undefined, steps: {} })).toBeNull();
  });

  it('reads only data, never what objects inherit', () => {
    expect(value('input.constructor', s)).toBeNull();
    expect(value('input.a.toString', s)).toBeNull();
    expect(value('input.list.length', s)).toBeNull();
  });

  it('has literals', () => {
    expect(value("'it\\'s'")).toBe("it's");
    expect(value('"a\\"b\\n"')).toBe('a"b\n');
    expect(value('42')).toBe(42);
    expect(value('-1.5')).toBe(-1.5);
    expect(value('true')).toBe(true);
    expect(value('false')).toBe(false);
    expect(value('null')).toBeNull();
  });

  it('compares strictly, and lists and maps by content', () => {
    expect(value("input.a.b == 'x'", s)).toBe(true);
    expect(value("input.a.b != 'x'", s)).toBe(false);
    expect(value("input.n == '0'", s)).toBe(false);
    expect(value('input.nope == null', s)).toBe(true);
    expect(value('input.a == input.a', s)).toBe(true);
    expect(value('input.list == input.list', s)).toBe(true);
    expect(value('input.a == input.list', s)).toBe(false);
  });

  it("returns &&'s and ||'s operands, as JavaScript does", () => {
    expect(value("input.nope || 'default'", s)).toBe('default');
    expect(value("input.a.b || 'default'", s)).toBe('x');
    expect(value("input.n && 'never'", s)).toBe(0);
    expect(value('!input.n', s)).toBe(true);
    expect(value('!!input.a', s)).toBe(true);
  });

  it('binds ! tightest, then ==, then &&, then ||', () => {
    expect(value('true || false && false')).toBe(true);
    expect(value('(true || false) && false')).toBe(false);
    expect(value('!false == true')).toBe(true);
    expect(value('false == false && true')).toBe(true);
    expect(value("!steps.ask.output.timed_out && steps.ask.status == 'succeeded'", s)).toBe(true);
  });
});

describe('truthy', () => {
  it.each([
    [false, false],
    [null, false],
    [undefined, false],
    ['', false],
    [0, false],
    [Number.NaN, false],
    [true, true],
    ['false', true],
    ['0', true],
    [1, true],
    [[], true],
    [{}, true],
  ])('%j is %s', (input, expected) => {
    expect(truthy(input)).toBe(expected);
  });
});

describe('parseExpression', () => {
  it('takes a bare expression or one ${{ }}, with offsets into what it was given', () => {
    expect(parseExpression('input.x')).toMatchObject({ kind: 'path', root: 'input', keys: ['x'], at: 0 });
    expect(parseExpression('${{ input.x }}')).toMatchObject({ kind: 'path', at: 4, text: 'input.x' });
  });

  it.each([
    ['', 0, 'empty expression; expected a value such as input.name'],
    ['input.a &&', 10, "expected a value after '&&', found the end"],
    ['input.a input.b', 8, "unexpected 'input'; expected '&&', '||', '==', '!=' or the end"],
    ['(input.a', 8, "unclosed '('; expected ')' before the end"],
    ["input.a == 'x", 11, "unclosed string; expected a closing '"],
    ['input.a = 1', 8, "use '==' to compare"],
    ['input.a & input.b', 8, "use '&&' for and"],
    [
      'steps.ask-lead.output.x',
      9,
      "'-' is not an operator here; job names in expressions use underscores (ask_lead, not ask-lead)",
    ],
    [
      'env.HOME',
      0,
      "unknown name 'env'; expressions read input.<key>, steps.<job>.output.<key>, steps.<job>.status and item",
    ],
    ['steps.ask.outputs.x', 10, "expected steps.ask.output.<key> or steps.ask.status, found 'outputs'"],
    ['steps.ask', 9, 'expected steps.ask.output.<key> or steps.ask.status'],
    ['steps', 5, 'expected steps.<job>.output.<key> or steps.<job>.status'],
    ['steps.ask.status.x', 17, "steps.ask.status is a string; it has no 'x'"],
    ['input.', 6, "expected a name after '.', found the end"],
    ['input[input.a]', 6, "expected a quoted key or an index after '[', found 'input'"],
    ['input.a @', 8, "unexpected character '@'"],
    [')', 0, "unexpected ')'; expected a value"],
  ])('refuses %j at offset %i: %s', (src, offset, reason) => {
    let caught: unknown;
    try {
      parseExpression(src);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ExpressionError);
    expect(caught).toMatchObject({ reason, offset });
  });
});

describe('references', () => {
  it('lists the jobs read, once each in order, and whether input and item are used', () => {
    const expr = parseExpression("steps.b.output.x == item.y || (steps.a.status == 'skipped' && !steps.b.output.z)");
    expect(references(expr)).toEqual({ jobs: ['b', 'a'], usesInput: false, usesItem: true });
    expect(references(parseExpression("input.a == 'x'"))).toEqual({ jobs: [], usesInput: true, usesItem: false });
  });
});

describe('isExpression', () => {
  it.each([
    ['${{ steps.ask.output.timed_out }}', true],
    ['  ${{ a }}\n', true],
    ["${{ input.x == '}}' }}", true],
    ['steps.ask.output.timed_out', false],
    ['crm-${{ input.tenant }}', false],
    ['${{ a }} ${{ b }}', false],
    ['${{ a', false],
    ['', false],
  ])('%j: %s', (text, expected) => {
    expect(isExpression(text)).toBe(expected);
  });
});

describe('parseExpression given ${{ }} text', () => {
  it.each([
    ['${{ input.a', 0, "'${{' is never closed; expected '}}'"],
    ['${{ input.a }} ${{ input.b }}', 0, 'expected exactly one ${{ }} expression, with nothing around it'],
    ['x ${{ input.a }}', 2, 'expected exactly one ${{ }} expression, with nothing around it'],
  ])('refuses %j at offset %i: %s', (src, offset, reason) => {
    expect(() => parseExpression(src)).toThrow(expect.objectContaining({ reason, offset }));
  });
});
