import { describe, expect, it } from 'vitest';
import { parseGraph } from '../../src/graph/parse.js';

/** A document from lines, so a case's line numbers can be read off its array (line 1 first). */
const doc = (...lines: string[]) => `${lines.join('\n')}\n`;

function refusal(text: string, file = 'g.yaml'): string {
  try {
    parseGraph(text, file);
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
  return 'accepted';
}

/** The seed's charge node, verbatim but for the URL, as JSON and as YAML. */
const CHARGE_JSON = `{ "nodes": [
  { "id": "charge", "type": "http",
    "config": { "method": "POST", "url": "http://127.0.0.1:9/charges",
                "headers": { "Idempotency-Key": { "$expr": "node.idempotency_key" } } } }
] }
`;

describe('a graph document', () => {
  it('given the seed\'s charge node in JSON, then it is a graph of one http node whose header is an $expr', () => {
    const graph = parseGraph(CHARGE_JSON, 'charge.json');
    expect(graph.nodes).toHaveLength(1);
    expect(graph.nodes[0]).toMatchObject({ id: 'charge', type: 'http', dependsOn: [], fanOut: null });
    expect(graph.nodes[0]?.config.headers).toEqual({ 'Idempotency-Key': { $expr: 'node.idempotency_key' } });
  });

  it('given every node type, retry, timeout, if, fan_out and outputs in YAML, then it is accepted as written', () => {
    const graph = parseGraph(
      doc(
        'name: all',
        'input:',
        '  order: { default: "o-1" }',
        'nodes:',
        '  - id: charge',
        '    type: http',
        '    retry: { attempts: 3, backoff: 100ms }',
        '    timeout: 30s',
        '    config: { method: POST, url: { $expr: "input.url" }, body: { order: { $expr: input.order } }, expect: [200, 201] }',
        '  - id: notify',
        '    type: http',
        '    depends_on: [charge]',
        '    if: nodes.charge.output.status == 200',
        '    fan_out: { items: [a, b], max_parallel: 2, rate: 5/1s }',
        '    config: { url: { $expr: "item" }, headers: { X-Index: { $expr: "index" } } }',
        '  - { id: build, type: script, config: { interpreter: bash, body: "echo hi" } }',
        '  - { id: child, type: call, config: { workflow: child.sh, input: { x: 1 } } }',
        '  - { id: ok, type: approval, config: { prompt: Ship?, timeout: 1h } }',
        '  - { id: hook, type: wait, config: { signal: go, timeout: 5m } }',
        '  - { id: pause, type: sleep, config: { duration: 2s } }',
        'outputs:',
        '  status: { $expr: nodes.charge.output.status }',
      ),
      'all.yaml',
    );
    expect(graph.nodes.map((node) => node.type)).toEqual(['http', 'http', 'script', 'call', 'approval', 'wait', 'sleep']);
    expect(graph.nodes[0]?.retry).toEqual({ attempts: 3, backoffMs: 100 });
    expect(graph.nodes[1]?.fanOut).toEqual({ items: ['a', 'b'], maxParallel: 2, rate: { limit: 5, periodMs: 1000 } });
    expect(graph.inputDefaults).toEqual({ order: 'o-1' });
  });

  it('given declared inputs, then each typed one, or one with a plain default, is a field of the start form; one with neither leaves the form to JSON', () => {
    const sleep = '  - { id: a, type: sleep, config: { duration: 1s } }';
    const typed = parseGraph(doc('input:', '  order: { description: Order, type: string, required: true }', '  amount: { type: number, min: 1, max: 500, default: 10 }', '  region: { options: [eu, us], default: eu }', '  rush: { default: false }', 'nodes:', sleep), 'g.yaml');
    expect(typed.inputForm).toEqual([
      { name: 'order', type: 'string', label: 'Order', required: true, default: null, options: null, min: null, max: null },
      { name: 'amount', type: 'number', label: 'amount', required: false, default: 10, options: null, min: 1, max: 500 },
      { name: 'region', type: 'string', label: 'region', required: false, default: 'eu', options: ['eu', 'us'], min: null, max: null },
      { name: 'rush', type: 'boolean', label: 'rush', required: false, default: false, options: null, min: null, max: null },
    ]);
    expect(typed.inputDefaults).toEqual({ amount: 10, region: 'eu', rush: false });
    expect(parseGraph(doc('input:', '  order: { default: o-1 }', '  items: { default: [1, 2] }', 'nodes:', sleep), 'g.yaml').inputForm).toBeNull();
    expect(parseGraph(doc('input:', '  order: { description: the order }', 'nodes:', sleep), 'g.yaml').inputForm).toBeNull();
    expect(parseGraph(doc('nodes:', sleep), 'g.yaml').inputForm).toBeNull();
    expect(refusal(doc('input:', '  n: { type: number, max: 5, default: 9 }', 'nodes:', sleep))).toBe("UsageError: g.yaml:2:39: the default of form field 'n' (9) is outside its bounds (… to 5)");
  });

  const node = (...lines: string[]) => doc('nodes:', ...lines);
  const CASES: [string, string, string][] = [
    ['not a map', '[1, 2]\n', "g.yaml:1:1: expected a graph: a map with nodes"],
    ['no nodes key', 'name: x\n', "g.yaml:1:1: missing key 'nodes' at the top level"],
    ['an empty nodes list', 'nodes: []\n', "g.yaml:1:8: 'nodes' must list at least one node"],
    ['an unknown top-level key', doc('nodes: []', 'jobs: {}'), "g.yaml:2:1: unknown key 'jobs' at the top level (expected one of name, input, nodes, outputs)"],
    ['a node without an id', node('  - { type: sleep, config: { duration: 1s } }'), "g.yaml:2:5: missing key 'id' in 'nodes[0]'"],
    ['an unknown type', node('  - { id: a, type: smtp, config: {} }'), "g.yaml:2:20: 'type' must be one of http, script, call, approval, wait, sleep"],
    ['an id with a hyphen', node('  - { id: a-b, type: sleep, config: { duration: 1s } }'), "g.yaml:2:11: 'id' must be letters, digits and underscores, not starting with a digit, since expressions name nodes (nodes.<id>) and read '-' as minus"],
    ['two nodes with one id', node('  - { id: a, type: sleep, config: { duration: 1s } }', '  - { id: a, type: sleep, config: { duration: 1s } }'), "g.yaml:3:11: two nodes have the id 'a' (entries 1 and 2); ids must differ"],
    ['an unknown node in depends_on', node('  - { id: a, type: sleep, config: { duration: 1s } }', '  - { id: b, type: sleep, depends_on: [aa], config: { duration: 1s } }'), "g.yaml:3:40: depends_on names unknown node 'aa' (did you mean 'a'?)"],
    ['a cycle', node('  - { id: a, type: sleep, depends_on: [b], config: { duration: 1s } }', '  - { id: b, type: sleep, depends_on: [a], config: { duration: 1s } }'), 'g.yaml:2:40: cycle in depends_on: a -> b -> a'],
    ['a node that depends on itself', node('  - { id: a, type: sleep, depends_on: [a], config: { duration: 1s } }'), 'g.yaml:2:40: cycle in depends_on: a -> a'],
    ['an http node without a url', node('  - { id: a, type: http, config: { method: GET } }'), "g.yaml:2:26: missing key 'url' in 'nodes[0].config'"],
    ['an unknown http method', node('  - { id: a, type: http, config: { method: FETCH, url: http://x } }'), "g.yaml:2:44: 'method' must be one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"],
    ['an unknown key in an http config', node('  - { id: a, type: http, config: { url: http://x, verb: GET } }'), "g.yaml:2:51: unknown key 'verb' in 'nodes[0].config' (expected one of method, url, headers, body, expect, timeout)"],
    ['an expect status out of range', node('  - { id: a, type: http, config: { url: http://x, expect: [200, 700] } }'), "g.yaml:2:65: entry 2 of 'expect' must be 599 or less"],
    ['a bad $expr', node('  - { id: a, type: http, config: { url: { $expr: "input.x &" } } }'), "g.yaml:2:59: bad expression 'input.x &': use '&&' for and"],
    ['an $expr with a key beside it', node('  - { id: a, type: http, config: { url: { $expr: input.x, also: 1 } } }'), "g.yaml:2:59: unknown key 'also' in 'nodes[0].config.url' (expected one of $expr)"],
    ['an $expr that reads an unknown node', node('  - { id: a, type: sleep, config: { duration: 1s } }', '  - { id: b, type: http, depends_on: [a], config: { url: { $expr: nodes.aa.output.body } } }'), "g.yaml:3:67: unknown node 'aa' in nodes.aa.output.body (did you mean 'a'?)"],
    ['an $expr that reads a node it does not depend on', node('  - { id: a, type: sleep, config: { duration: 1s } }', '  - { id: b, type: http, config: { url: { $expr: nodes.a.output.body } } }'), "g.yaml:3:50: node 'b' reads nodes.a.output.body but does not depend on 'a', so it may not have run yet; add it to depends_on"],
    ['an $expr that reads a pipeline\'s steps', node('  - { id: a, type: http, config: { url: { $expr: steps.a.output } } }'), "g.yaml:2:50: bad expression 'steps.a.output': unknown name 'steps'; expressions read input.<key>, nodes.<id>.output, nodes.<id>.status, node.id, node.idempotency_key, item and index"],
    ['item outside a fan_out', node('  - { id: a, type: http, config: { url: { $expr: item } } }'), "g.yaml:2:50: 'item' is only defined in the config of a node with a fan_out, not in the config of node 'a'"],
    ['an unknown field of node', node('  - { id: a, type: http, config: { url: { $expr: node.key } } }'), "g.yaml:2:50: node.key is not known; a node has node.id and node.idempotency_key"],
    ['node in outputs', doc('nodes:', '  - { id: a, type: sleep, config: { duration: 1s } }', 'outputs:', '  k: { $expr: node.id }'), "g.yaml:4:15: 'node' is the node that runs; output 'k' belongs to no node"],
    ['an output that is not an $expr', doc('nodes:', '  - { id: a, type: sleep, config: { duration: 1s } }', 'outputs:', '  k: 3'), "g.yaml:4:6: output 'k' must be one {\"$expr\": \"...\"}, such as {\"$expr\": \"nodes.charge.output.status\"}"],
    ['a bad if', node('  - { id: a, type: sleep, if: "input.x ==", config: { duration: 1s } }'), "g.yaml:2:42: bad expression 'input.x ==': expected a value after '==', found the end"],
    ['a sleep with a bad duration', node('  - { id: a, type: sleep, config: { duration: 2 days } }'), "g.yaml:2:47: 'duration' must be a duration like 30s, 5m, 2d"],
    ['a wait with no timeout', node('  - { id: a, type: wait, config: { signal: go } }'), "g.yaml:2:26: missing key 'timeout' in 'nodes[0].config'"],
    ['a wait on both a signal and an event', node('  - { id: a, type: wait, config: { signal: go, event: e, timeout: 1m } }'), "g.yaml:2:48: 'config' has both signal and event; it takes exactly one of signal or event"],
    ['a script in an unknown interpreter', node('  - { id: a, type: script, config: { interpreter: ruby, body: puts } }'), "g.yaml:2:51: 'interpreter' must be one of bash, python, node"],
    ['a fan_out over 101 items', node(`  - { id: a, type: sleep, fan_out: { items: [${Array.from({ length: 101 }, (_, i) => i).join(', ')}] }, config: { duration: 1s } }`), 'g.yaml:2:436: fan_out takes at most 100 items, got 101'],
    ['a fan_out rate of 0s', node('  - { id: a, type: sleep, fan_out: { items: [1], rate: 1/0s }, config: { duration: 1s } }'), "g.yaml:2:56: 'rate' must be a duration longer than 0, got '0s'"],
    ['a retry of -1', node('  - { id: a, type: sleep, retry: -1, config: { duration: 1s } }'), "g.yaml:2:34: 'retry' must be 0 or more"],
    ['a timeout on a sleep node', node('  - { id: a, type: sleep, timeout: 5s, config: { duration: 1s } }'), "g.yaml:2:36: 'timeout' bounds an http node's attempts; a sleep node takes none here (a wait or an approval has one in its config)"],
    ['an empty expect', node('  - { id: a, type: http, config: { url: http://x, expect: [] } }'), "g.yaml:2:59: 'expect' must list at least one status (leave it out for any 2xx)"],
    ['approvers asking for more people than an approval names', node('  - { id: a, type: approval, config: { prompt: ok?, approvers: { count: 3, from: [alice, bob] } } }'), "g.yaml:2:73: 'count' is 3 but 'from' names only 2 people and no group, so the gate could never open"],
    ['an unknown key in approvers', node('  - { id: a, type: approval, config: { prompt: ok?, approvers: { count: 1, from: [alice], of: 2 } } }'), "g.yaml:2:91: unknown key 'of' in 'nodes[0].config.approvers' (expected one of count, from)"],
    ['JSON that is not closed', '{ "nodes": [ }\n', 'g.yaml:1:14: bad YAML'],
  ];

  it.each(CASES)('given %s, then it is refused with line, column and reason', (_what, text, expected) => {
    const got = refusal(text);
    if (expected.endsWith('bad YAML')) expect(got.startsWith(`UsageError: ${expected}`), got).toBe(true);
    else expect(got).toBe(`UsageError: ${expected}`);
  });

  it('has at least twenty malformed cases', () => expect(CASES.length).toBeGreaterThanOrEqual(20));
});
