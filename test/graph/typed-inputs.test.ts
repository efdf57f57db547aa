import { describe, expect, it } from 'vitest';
import { cli, listRuns, submit, useDevServer } from '../support/dev.js';
import { tempDir, writeFiles } from '../support/spool.js';

/**
 * A graph's typed inputs (docs/graphs.md: `type`, `required`, `options`, `min`, `max`) held by the
 * server, not only by the web UI's Start form: `POST /v1/runs` refuses an input that does not fit
 * with a 400 in the API's one error shape naming the input, and records no run; `spool submit`
 * says the same in one line and exits non-zero. An input typed only by its default takes what it
 * took before.
 */

const dev = useDevServer();

const REFUND = `name: refund
input:
  order: { description: Order, type: string, required: true }
  amount: { description: Amount, type: number, min: 1, max: 500, default: 10 }
  region: { type: string, options: [eu, us], default: eu }
  express: { type: boolean }
  rush: { description: Rush, default: false }
nodes:
  - { id: pause, type: sleep, config: { duration: 1h } }
`;

const submitGraph = (input: unknown): Promise<Response> =>
  fetch(`${dev.url}/v1/runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ workflow: 'refund.yaml', interpreter: 'graph', script: REFUND, ...(input === undefined ? {} : { input }) }),
  });

describe('a graph’s typed inputs, checked by the server', () => {
  it.each([
    ['a required input left out', { amount: 5 }, "input 'order' is required (a string)"],
    ['no input at all, where one is required', undefined, "input 'order' is required (a string)"],
    ['a number given as text', { order: 'A-1', amount: '5' }, `input 'amount' must be a number, not "5"`],
    ['a number under its min', { order: 'A-1', amount: 0 }, "input 'amount' must be at least 1, not 0"],
    ['a number over its max', { order: 'A-1', amount: 900 }, "input 'amount' must be at most 500, not 900"],
    ['a string not among its options', { order: 'A-1', region: 'mars' }, `input 'region' must be one of eu, us, not "mars"`],
    ['a boolean given as a number', { order: 'A-1', express: 1 }, "input 'express' must be a boolean, not 1"],
    ['null for a typed input', { order: null }, "input 'order' must be a string, not null"],
    ['an input that is not an object', ['A-1'], 'the graph declares typed inputs (order, amount, region, express), so its input must be a JSON object, not ["A-1"]'],
  ])('given %s, POST /v1/runs answers 400 invalid_input naming it, and records no run', async (_what, input, message) => {
    const before = (await listRuns(dev.url)).length;
    const response = await submitGraph(input);
    expect(await response.json()).toEqual({ error: { code: 'invalid_input', message } });
    expect(response.status).toBe(400);
    expect((await listRuns(dev.url)).length).toBe(before);
  });

  it('given inputs that fit, and an input typed only by its default given another type (as before), then the run is made with the input as given', async () => {
    const response = await submitGraph({ order: 'A-1', amount: 500, region: 'us', express: true, rush: 'yes', note: { free: 'form' } });
    const answer = (await response.json()) as { run: { input: unknown } };
    expect(response.status, JSON.stringify(answer)).toBe(201);
    expect(answer.run.input).toEqual({ order: 'A-1', amount: 500, region: 'us', express: true, rush: 'yes', note: { free: 'form' } });
    // The optional ones left out take their defaults when the graph reads them.
    expect((await submitGraph({ order: 'A-2' })).status).toBe(201);
  });

  it('given spool submit with an input over a bound, then one line says which input and why, it exits 2 (usage), and no run is made', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'refund.yaml': REFUND });
    const before = (await listRuns(dev.url)).length;
    const result = await cli(dev.url, dir, ['submit', 'refund.yaml', '--input', '{"order": "A-1", "amount": 900}']);
    expect(result.output).toBe("spool: input 'amount' must be at most 500, not 900\n");
    expect(result.code).toBe(2);
    expect((await listRuns(dev.url)).length).toBe(before);
    expect(await submit(dev.url, dir, 'refund.yaml', '--input', '{"order": "A-1", "amount": 20}')).toMatch(/^dev:/);
  });
});
