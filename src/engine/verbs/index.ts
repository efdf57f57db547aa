import type { PassState as Pass } from '../pass-state.js';
import { UsageError } from '../../common/errors.js';
import { PROTOCOL_VERSION, type Answer, type Request } from '../protocol.js';
import { artifactCommit, artifactGet, artifactList, artifactPut, artifactWrite } from './artifacts.js';
import { activityRun, activitySubmit, activityWait } from './activities.js';
import { callNode } from './call-node.js';
import { annotate, call, emit, setOutput, spawn, waitChildren } from './children.js';
import { done, lock, step, stepFn } from './commands.js';
import { state } from './state.js';
import { sleep, waitEvent, waitSignal } from './waits.js';

export const VERBS = [
  'step', 'step_fn', 'done', 'sleep', 'wait.signal', 'wait.event', 'lock', 'activity.submit', 'activity.run', 'activity.wait',
  'state.get', 'state.set', 'state.delete', 'state.list', 'state.version', 'state.add', 'state.incr', 'state.cas',
  'event.emit', 'spawn', 'call', 'call.node', 'wait.children', 'output.set', 'annotate', 'agent.info',
  'artifact.put', 'artifact.write', 'artifact.commit', 'artifact.get', 'artifact.list',
] as const;

export function handleVerb(pass: Pass, request: Request): Promise<Answer> {
  switch (request.verb) {
    case 'step':
      return step(pass, request);
    case 'step_fn':
      return stepFn(pass, request);
    case 'done':
      return done(pass, request);
    case 'lock':
      return lock(pass, request);
    case 'sleep':
      return sleep(pass, request);
    case 'wait.signal':
      return waitSignal(pass, request);
    case 'wait.event':
      return waitEvent(pass, request);
    case 'activity.submit':
      return activitySubmit(pass, request);
    case 'activity.run':
      return activityRun(pass, request);
    case 'activity.wait':
      return activityWait(pass, request);
    case 'state.get':
    case 'state.set':
    case 'state.delete':
    case 'state.list':
    case 'state.version':
    case 'state.add':
    case 'state.incr':
    case 'state.cas':
      return state(pass, request);
    case 'event.emit':
      return emit(pass, request);
    case 'spawn':
      return spawn(pass, request);
    case 'call':
      return call(pass, request);
    case 'call.node':
      // The node's own durable calls (an http node's step, a sleep, a child run) go to the verbs as a graph's do.
      return callNode(pass, request, (nested) => handleVerb(pass, nested));
    case 'wait.children':
      return waitChildren(pass, request);
    case 'output.set':
      return setOutput(pass, request);
    case 'annotate':
      return annotate(pass, request);
    case 'artifact.put':
      return artifactPut(pass, request);
    case 'artifact.write':
      return artifactWrite(pass, request);
    case 'artifact.commit':
      return artifactCommit(pass, request);
    case 'artifact.get':
      return artifactGet(pass, request);
    case 'artifact.list':
      return artifactList(pass, request);
    case 'agent.info':
      return Promise.resolve({ status: 'ok', stdout: `${JSON.stringify({ protocol: PROTOCOL_VERSION, verbs: VERBS })}\n`, exitCode: 0 });
    default:
      // What an SDK newer than this agent meets: a usage error that says so, not an internal one.
      return Promise.reject(
        new UsageError(
          `unknown verb '${String((request as { verb: unknown }).verb)}': this agent speaks protocol ${PROTOCOL_VERSION} ` +
            `and does not know it (is the script's SDK newer than the agent?)`,
        ),
      );
  }
}
