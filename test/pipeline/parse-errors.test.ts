import { describe, expect, it } from 'vitest';
import { fixtureText, refusal } from './fixtures.js';

/** A document from lines, so a case's line numbers can be read off its array (line 1 first). */
const doc = (...lines: string[]) => `${lines.join('\n')}\n`;

/** The refund recipe with one line changed: `from` must occur in it. */
function refundWith(from: string, to: string): string {
  const text = fixtureText('refund');
  if (!text.includes(from)) throw new Error(`refund.yaml has no ${from}`);
  return text.replace(from, to);
}

describe('the seven ways a pipeline is refused that the recipes warn about', () => {
  it('an unknown key: points at the key and lists the keys a job takes', () => {
    const text = refundWith('  escalate:\n    depends_on: [ask]', '  escalate:\n    depnds_on: [ask]');
    expect(refusal(text, 'refund.yaml')).toBe(
      "UsageError: refund.yaml:8:5: unknown key 'depnds_on' in job 'escalate' (expected one of depends_on, if, steps, script, approval, fan_out, retry, concurrency)",
    );
  });

  it('a bad expression: points at the token at fault', () => {
    const text = refundWith(
      'if: ${{ steps.ask.output.timed_out && steps.ask_lead',
      'if: ${{ steps.ask.output.timed_out & steps.ask_lead',
    );
    expect(refusal(text, 'refund.yaml')).toBe(
      "UsageError: refund.yaml:27:40: bad expression ${{ steps.ask.output.timed_out & steps.ask_lead.output.timed_out }}: use '&&' for and",
    );
  });

  it('an expression 2,000 deep: refused at the token past the limit, with line and column, not a stack overflow (issue 28, bug 12)', () => {
    const deep = `${'('.repeat(2000)}input.x${')'.repeat(2000)}`;
    const text = refundWith('if: ${{ steps.ask.output.timed_out && steps.ask_lead', `if: \${{ ${deep} && steps.ask_lead`);
    expect(refusal(text, 'refund.yaml')).toMatch(/^UsageError: refund\.yaml:27:\d+: bad expression .*: nested more than 32 deep; write it flatter$/);
    const bangs = refundWith('if: ${{ steps.ask.output.timed_out && steps.ask_lead', `if: \${{ ${'!'.repeat(2000)}input.x && steps.ask_lead`);
    expect(refusal(bangs, 'refund.yaml')).toMatch(/^UsageError: refund\.yaml:27:\d+: bad expression .*: nested more than 32 deep; write it flatter$/);
  });

  it('a cycle in depends_on: names it, and points at its first arrow', () => {
    const text = refundWith('  ask:\n    approval:', '  ask:\n    depends_on: [refund]\n    approval:');
    expect(refusal(text, 'refund.yaml')).toBe(
      'UsageError: refund.yaml:4:18: cycle in depends_on: ask -> refund -> ask_lead -> escalate -> ask',
    );
  });

  it('an unknown job in an expression: points at the path and suggests the job meant', () => {
    const text = refundWith('|| !steps.ask_lead.output', '|| !steps.ask_led.output');
    expect(refusal(text, 'refund.yaml')).toBe(
      "UsageError: refund.yaml:21:45: unknown job 'ask_led' in expression ${{ !steps.ask.output.timed_out || !steps.ask_led.output.timed_out }} (did you mean 'ask_lead'?)",
    );
  });

  it('a bad duration', () => {
    const text = refundWith('timeout: 2d', 'timeout: 2 days');
    expect(refusal(text, 'refund.yaml')).toBe(
      "UsageError: refund.yaml:6:16: 'timeout' must be a duration like 30s, 5m, 2d, or ${{ }} that yields one",
    );
  });

  it('101 fan_out items: points at the 101st', () => {
    const lines = ['name: probe', 'jobs:', '  probe:', '    fan_out:', '      items:'];
    for (let i = 0; i < 101; i++) lines.push(`        - r${i}`);
    lines.push('      steps:', '        - name: probe', '          run: echo ${{ item }}');
    expect(refusal(doc(...lines))).toBe('UsageError: p.yaml:106:11: fan_out takes at most 100 items, got 101');
    // 100 is allowed.
    expect(() => refusal(doc(...lines.filter((line) => line !== '        - r100')))).toThrow('accepted');
  });

  it('a YAML syntax error', () => {
    const text = refundWith('depends_on: [escalate]', 'depends_on: [escalate');
    expect(refusal(text, 'refund.yaml')).toBe(
      'UsageError: refund.yaml:15:5: bad YAML: Flow sequence in block collection must be sufficiently indented and end with a ]',
    );
  });
});

describe('other refusals', () => {
  it.each([
    ['an empty file', doc(''), 'p.yaml:1:1: expected a pipeline: a map with name and jobs'],
    ['a list instead of a map', doc('- a'), 'p.yaml:1:1: expected a pipeline: a map with name and jobs'],
    ['no jobs', doc('name: x'), "p.yaml:1:1: missing key 'jobs' at the top level"],
    ['an empty jobs map', doc('name: x', 'jobs: {}'), "p.yaml:2:7: 'jobs' must hold at least one job"],
    [
      'an unknown top-level key',
      doc('name: x', 'on: push', 'jobs:', '  a:', '    script: x'),
      "p.yaml:2:1: unknown key 'on' at the top level (expected one of name, concurrency, throttle, jobs, outputs)",
    ],
    [
      'a job without a body',
      doc('name: x', 'jobs:', '  a:', '    depends_on: []'),
      "p.yaml:3:3: job 'a' needs one of steps, script, approval or fan_out",
    ],
    [
      'a job with two bodies',
      doc('name: x', 'jobs:', '  a:', '    steps:', '      - name: s', '        run: x', '    script: y'),
      "p.yaml:7:5: job 'a' has both steps and script; it takes exactly one of steps, script, approval or fan_out",
    ],
    [
      'a hyphen in a job name',
      doc('name: x', 'jobs:', '  ask-lead:', '    script: x'),
      "p.yaml:3:3: job name 'ask-lead' must be letters, digits and underscores, not starting with a digit, since expressions name jobs and read '-' as minus (try 'ask_lead')",
    ],
    [
      'a step without run: points at the step',
      doc('name: x', 'jobs:', '  a:', '    steps:', '      - name: s'),
      "p.yaml:5:9: missing key 'run' in 'steps[0]' of job 'a'",
    ],
    [
      'an approval without a prompt',
      doc('name: x', 'jobs:', '  a:', '    approval:', '      timeout: 1d'),
      "p.yaml:4:5: missing key 'prompt' in 'approval' of job 'a'",
    ],
    [
      'an output reading an unknown job',
      doc('name: x', 'jobs:', '  one:', '    script: x', 'outputs:', '  y: ${{ steps.onee.output.y }}'),
      "p.yaml:6:10: unknown job 'onee' in expression ${{ steps.onee.output.y }} (did you mean 'one'?)",
    ],
    [
      'an output that is not text',
      doc('name: x', 'jobs:', '  one:', '    script: x', 'outputs:', '  y: [1, 2]'),
      "p.yaml:6:6: output 'y' must be a string",
    ],
    [
      'an output with a bad expression',
      doc('name: x', 'jobs:', '  one:', '    script: x', 'outputs:', '  y: ${{ steps.one.output. }}'),
      "p.yaml:6:28: bad expression ${{ steps.one.output. }}: expected a name after '.', found the end",
    ],
    [
      'an output name with a hyphen',
      doc('name: x', 'jobs:', '  one:', '    script: x', 'outputs:', '  the-y: x'),
      "p.yaml:6:3: output name 'the-y' must be letters, digits and underscores, not starting with a digit, since expressions name outputs and read '-' as minus (try 'the_y')",
    ],
    [
      'depends_on an unknown job, written as one name',
      doc('name: x', 'jobs:', '  a:', '    script: x', '  b:', '    depends_on: aa', '    script: y'),
      "p.yaml:6:17: depends_on names unknown job 'aa' (did you mean 'a'?)",
    ],
    [
      'depends_on naming a job twice',
      doc('name: x', 'jobs:', '  a:', '    script: x', '  b:', '    depends_on: [a, a]', '    script: y'),
      "p.yaml:6:21: 'depends_on' lists 'a' twice",
    ],
    [
      'a job that depends on itself',
      doc('name: x', 'jobs:', '  a:', '    depends_on: [a]', '    script: x'),
      'p.yaml:4:18: cycle in depends_on: a -> a',
    ],
    [
      'reading a job that is not upstream',
      doc('name: x', 'jobs:', '  a:', '    script: x', '  b:', '    script: "echo ${{ steps.a.output.y }}"'),
      "p.yaml:6:23: job 'b' reads steps.a.output.y but does not depend on 'a', so it may not have run yet; add it to depends_on",
    ],
    [
      'reading its own output',
      doc('name: x', 'jobs:', '  a:', '    if: ${{ steps.a.status }}', '    script: x'),
      "p.yaml:4:13: job 'a' reads its own steps.a.status; a job sees only the jobs it depends on",
    ],
    [
      'item outside a fan_out, in a | block: points at the line and column within it',
      doc('name: x', 'jobs:', '  a:', '    script: |', '      echo one', '      echo ${{ item.x }}'),
      "p.yaml:6:16: 'item' is only defined in a fan_out's steps, not in 'script' of job 'a'",
    ],
    [
      'a throttle key reading a job',
      doc(
        'name: x',
        'throttle:',
        '  limit: 1',
        '  period: 1m',
        "  key: 'k-${{ steps.a.output.x }}'",
        'jobs:',
        '  a:',
        '    script: x',
      ),
      "p.yaml:5:15: 'throttle.key' is decided before any job runs, so it can read input but not steps.a.output.x",
    ],
    [
      'an if that is not an expression',
      doc('name: x', 'jobs:', '  a:', '    if: input.deploy', '    script: x'),
      "p.yaml:4:9: 'if' must be one ${{ }} expression, like ${{ steps.ask.output.timed_out }}",
    ],
    [
      'an if with text around its expression',
      doc('name: x', 'jobs:', '  a:', '    if: ${{ input.a }} and ${{ input.b }}', '    script: x'),
      "p.yaml:4:9: 'if' of job 'a' must be exactly one ${{ }} expression, with nothing around it",
    ],
    [
      'an unclosed ${{',
      doc('name: x', 'jobs:', '  a:', '    steps:', '      - name: s', '        run: "echo ${{ input.x"'),
      "p.yaml:6:20: '${{' is never closed; expected '}}'",
    ],
    [
      'a duplicate job',
      doc('name: x', 'jobs:', '  a:', '    script: x', '  a:', '    script: y'),
      "p.yaml:5:3: duplicate key 'a'; each key may appear once in a map",
    ],
    [
      'two documents',
      doc('name: x', 'jobs:', '  a:', '    script: x', '---', 'name: y'),
      "p.yaml:5:1: a pipeline file holds one YAML document; remove the '---' that starts a second",
    ],
    [
      'an unknown concurrency policy',
      doc('name: x', 'concurrency:', '  group: g', '  policy: wait', 'jobs:', '  a:', '    script: x'),
      "p.yaml:4:11: 'policy' must be queue, cancel-running or skip, or ${{ }} over input that yields one",
    ],
    [
      'a policy on a job-level concurrency group (only runs are cancelled or skipped)',
      doc('name: x', 'jobs:', '  a:', '    concurrency:', '      group: db', '      policy: skip', '    script: x'),
      "p.yaml:6:7: unknown key 'policy' in 'concurrency' of job 'a' (expected one of group)",
    ],
    [
      'a zero throttle period',
      doc('name: x', 'throttle:', '  limit: 1', '  period: 0s', 'jobs:', '  a:', '    script: x'),
      "p.yaml:4:11: 'period' must be a duration longer than 0, got '0s'",
    ],
    [
      'a throttle limit of 0',
      doc('name: x', 'throttle:', '  limit: 0', '  period: 1m', 'jobs:', '  a:', '    script: x'),
      "p.yaml:3:10: 'limit' must be 1 or more",
    ],
    [
      'a retry that is neither a count nor a map',
      doc('name: x', 'jobs:', '  a:', '    script: x', '    retry: lots'),
      "p.yaml:5:12: 'retry' must be a number of retries, or {attempts, backoff}",
    ],
    [
      'a negative retry',
      doc('name: x', 'jobs:', '  a:', '    script: x', '    retry: -1'),
      "p.yaml:5:12: 'retry' must be 0 or more",
    ],
    [
      'a fan_out with both steps and workflow',
      doc(
        'name: x',
        'jobs:',
        '  a:',
        '    fan_out:',
        '      items: [1]',
        '      workflow: child.yaml',
        '      steps:',
        '        - name: s',
        '          run: x',
      ),
      "p.yaml:7:7: 'fan_out' has both workflow and steps; it takes exactly one of steps or workflow",
    ],
    [
      'a fan_out with neither',
      doc('name: x', 'jobs:', '  a:', '    fan_out:', '      items: [1]'),
      "p.yaml:4:5: 'fan_out' needs one of steps or workflow",
    ],
    [
      'a malformed rate',
      doc(
        'name: x',
        'jobs:',
        '  a:',
        '    fan_out:',
        '      items: ${{ input.regions }}',
        '      rate: 10 a minute',
        '      workflow: child.yaml',
      ),
      "p.yaml:6:13: 'rate' must be a rate like 10/1m, or {limit, period}",
    ],
    [
      'a misspelt key in a rate map',
      doc(
        'name: x',
        'jobs:',
        '  a:',
        '    fan_out:',
        '      items: [1]',
        '      rate: {limit: 2, perod: 1m}',
        '      workflow: child.yaml',
      ),
      "p.yaml:6:24: unknown key 'perod' in 'fan_out.rate' of job 'a' (expected one of limit, period)",
    ],
    [
      'fan_out items that are neither a list nor an expression',
      doc('name: x', 'jobs:', '  a:', '    fan_out:', '      items: eu-north', '      workflow: child.yaml'),
      "p.yaml:5:14: 'items' must be one ${{ }} expression, like ${{ steps.ask.output.timed_out }}",
    ],
    [
      'an expression in a fan_out workflow path',
      doc('name: x', 'jobs:', '  a:', '    fan_out:', '      items: [1]', '      workflow: ${{ item }}.yaml'),
      "p.yaml:6:17: 'workflow' is a file path; it takes no ${{ }} expressions",
    ],
    [
      'two steps with one name',
      doc(
        'name: x',
        'jobs:',
        '  a:',
        '    steps:',
        '      - name: s',
        '        run: x',
        '      - name: s',
        '        run: y',
      ),
      "p.yaml:7:15: two steps are named 's'; step names must differ within a job",
    ],
    [
      'a hyphenated job in a quoted expression: points inside the quotes',
      doc(
        'name: x',
        'jobs:',
        '  a:',
        '    steps:',
        '      - name: s',
        "        run: 'echo ${{ steps.ask-lead.output.x }}'",
      ),
      "p.yaml:6:33: bad expression ${{ steps.ask-lead.output.x }}: '-' is not an operator here; job names in expressions use underscores (ask_lead, not ask-lead)",
    ],
    [
      'approvers asking for none',
      doc('name: x', 'jobs:', '  ask:', '    approval:', '      prompt: ok?', '      approvers:', '        count: 0', '        from: [alice]'),
      "p.yaml:7:16: 'count' must be 1 or more",
    ],
    [
      'approvers asking for more people than it names, and no group',
      doc('name: x', 'jobs:', '  ask:', '    approval:', '      prompt: ok?', '      approvers:', '        count: 3', '        from: [alice, bob]'),
      "p.yaml:7:16: 'count' is 3 but 'from' names only 2 people and no group, so the gate could never open",
    ],
    [
      'an unknown key in approvers',
      doc('name: x', 'jobs:', '  ask:', '    approval:', '      prompt: ok?', '      approvers:', '        count: 2', '        from: [alice, bob]', '        form: x'),
      "p.yaml:9:9: unknown key 'form' in 'approval.approvers' of job 'ask' (expected one of count, from)",
    ],
    [
      'approvers naming a group with no name',
      doc('name: x', 'jobs:', '  ask:', '    approval:', '      prompt: ok?', '      approvers:', '        count: 1', '        from: ["group:"]'),
      "p.yaml:8:15: 'group:' in 'from' names no group; write group:<name>",
    ],
    [
      'approvers from nobody',
      doc('name: x', 'jobs:', '  ask:', '    approval:', '      prompt: ok?', '      approvers:', '        count: 1', '        from: []'),
      "p.yaml:8:15: 'from' must list at least one entry",
    ],
  ])('%s', (_, text, message) => {
    expect(refusal(text)).toBe(`UsageError: ${message}`);
  });
});
