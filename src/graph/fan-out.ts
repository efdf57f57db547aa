import { MAX_FAN_OUT_ITEMS } from '../pipeline/defaults.js';
import { evaluate } from '../pipeline/expressions.js';
import type { ExpressionScope } from '../pipeline/types.js';
import { parseGraphExpression } from './expressions.js';
import { callOk, type NodeHost, type NodeResult } from './node-host.js';
import { nodeScope, runNode, type NodeSpec } from './nodes.js';
import type { GraphFanOut } from './types.js';

/**
 * A node run once per item (`item` and `index` in its config), its output the items' outputs in
 * item order; it fails when an item fails, after the items under way have ended.
 *
 * http items run at once in this process, at most max_parallel together, each request sent at least
 * period/limit after the one before (a replayed item sends nothing, so waits for nothing). Each item is one durable
 * call, reached in item order whatever order they end in, so a replay meets the same journal.
 * Items of the other types are child runs or waits, which end the pass while they wait: they run
 * one after another, with a durable sleep between starts for the rate.
 */
export async function runFanOut(host: NodeHost, spec: NodeSpec, fan: GraphFanOut, scope: ExpressionScope): Promise<NodeResult> {
  const items = Array.isArray(fan.items) ? fan.items : evaluate(parseGraphExpression(fan.items.$expr), scope);
  if (!Array.isArray(items) || items.length > MAX_FAN_OUT_ITEMS) {
    const what = Array.isArray(items) ? `${items.length} items` : 'not a list';
    return { status: 'failed', output: null, error: `fan_out takes a list of at most ${MAX_FAN_OUT_ITEMS} items, got ${what}` };
  }
  const gapMs = fan.rate ? Math.ceil(fan.rate.periodMs / fan.rate.limit) : 0;
  const itemScope = (index: number) => nodeScope(scope, host.run.id, spec.id, { item: items[index], index });
  const results: NodeResult[] = [];
  if (spec.type === 'http') {
    const running = new Set<Promise<void>>();
    const beforeSend = gapMs > 0 ? spacedBy(gapMs) : undefined;
    for (let index = 0; index < items.length; index++) {
      while (running.size >= (fan.maxParallel ?? MAX_FAN_OUT_ITEMS)) await Promise.race(running);
      const item: Promise<void> = runNode(host, spec, itemScope(index), index, beforeSend).then((result) => {
        results[index] = result;
        running.delete(item);
      });
      running.add(item);
    }
    await Promise.all(running);
  } else {
    for (let index = 0; index < items.length; index++) {
      if (index > 0 && gapMs > 0) await callOk(host, { verb: 'sleep', ms: gapMs });
      results[index] = await runNode(host, spec, itemScope(index), index);
    }
  }
  const output = results.map((result) => result.output);
  const failedAt = results.findIndex((result) => result.status === 'failed');
  if (failedAt === -1) return { status: 'succeeded', output, error: null };
  return { status: 'failed', output, error: `item ${failedAt} failed: ${results[failedAt]?.error ?? 'no reason given'}` };
}

/**
 * Lets its callers through one at a time, in the order they came, each at least gapMs after the one
 * before went. Applied where a request is sent, not where its item starts: an item first waits for
 * its durable call's answer, and the first such answer of a pass can take longer than the gap, which
 * let two requests reach the server 2 ms apart.
 */
function spacedBy(gapMs: number): () => Promise<void> {
  let last: Promise<number> = Promise.resolve(Number.NEGATIVE_INFINITY);
  return () => {
    const went = last.then(async (previous) => {
      const waitMs = previous + gapMs - Date.now();
      if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
      return Date.now();
    });
    last = went;
    return went.then(() => undefined);
  };
}
