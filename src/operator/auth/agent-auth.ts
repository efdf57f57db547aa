import type { AuthenticationV1Api, CoreV1Api } from '@kubernetes/client-node';
import type { AgentIdentity } from '../../server/remote-passes.js';
import type { V1Pod } from '@kubernetes/client-node';
import { LABELS, MANAGED_BY, passJobName, runIdOf } from '../naming.js';
import { assignmentOf } from '../warm/assignments.js';
import { boundPod } from './bound-pod.js';
import { TOKEN_CACHE_MS } from './token-review.js';
import { cachedFor } from './ttl-cache.js';

/** What an idle warm pod's token proves: nothing yet. */
const IDLE = Symbol('idle warm pod');

/**
 * Maps an agent's projected service-account token to exactly one pass of one run: the token is
 * bound to its pod (TokenReview answers the pod's name and uid), and the pod's labels say which
 * run and pass it serves, and its controller is that pass's Job (named after the run's Run, which
 * `runName` finds). A warm pod (spec.warmPods) serves the one pass the operator assigned it, which
 * its labels say once (warm/assignments.ts), and none before. A token not bound to a pass's pod
 * proves nothing.
 */
export function agentAuthenticator(
  authentication: AuthenticationV1Api,
  core: CoreV1Api,
  runName: (runId: string) => Promise<string | undefined>,
): AgentAuthenticator {
  // The whole answer is kept, pod read included: every durable call of a pass brings its token.
  // Not an idle warm pod's: it may be assigned its pass the next moment.
  const identify = cachedFor(TOKEN_CACHE_MS, async (token): Promise<AgentIdentity | null | typeof IDLE> => {
    const bound = await boundPod(authentication, core, token);
    if (!bound) return null;
    const { namespace, pod } = bound;
    if (isWarm(pod)) return assignmentOf(pod) ?? IDLE;
    const key = pod.metadata?.labels?.[LABELS.run];
    const pass = Number(pod.metadata?.labels?.[LABELS.pass]);
    if (!key || !Number.isInteger(pass)) return null;
    const runId = runIdOf(namespace, key);
    // Made by that pass's Job, not a pod someone labelled to look like one.
    const owner = controllingJob(pod);
    const name = owner ? await runName(runId) : undefined;
    if (name === undefined || owner !== passJobName(name, pass)) return null;
    return { runId, pass };
  }, (identity) => identity !== IDLE);
  const authenticate = async (token: string): Promise<AgentIdentity | null> => {
    const identity = await identify(token);
    return identity === IDLE ? null : identity;
  };
  return Object.assign(authenticate, { assigned: (token: string, identity: AgentIdentity, reviewedAt: number) => identify.remember(token, identity, reviewedAt) });
}

/**
 * Who an agent's token proves it is (null: nobody). `assigned` tells it what a warm pod's token
 * proves from now: the token was reviewed at `reviewedAt` (its pod's name and uid) as its agent
 * asked for a pass, and that pod (by uid) was just assigned `identity`, which its labels now say.
 * That is what a review would find, so its pass's first calls do not wait for one.
 */
export type AgentAuthenticator = ((token: string) => Promise<AgentIdentity | null>) & {
  assigned(token: string, identity: AgentIdentity, reviewedAt: number): void;
};

/** Made by a warm pod's Job of this operator (its labels and its controlling Job). */
function isWarm(pod: V1Pod): boolean {
  const labels = pod.metadata?.labels ?? {};
  return labels[LABELS.warm] !== undefined && labels[LABELS.managedBy] === MANAGED_BY && !!controllingJob(pod);
}

function controllingJob(pod: V1Pod): string | undefined {
  return pod.metadata?.ownerReferences?.find((reference) => reference.controller && reference.kind === 'Job')?.name;
}

/**
 * The warm pod a token is bound to (TokenReview), as just read, idle or assigned; null for any
 * other token: the one a warm pod's agent asks for its pass with (GET /v1/agent/assignment).
 */
export function warmPodAuthenticator(authentication: AuthenticationV1Api, core: CoreV1Api): (token: string) => Promise<V1Pod | null> {
  return async (token) => {
    const bound = await boundPod(authentication, core, token);
    return bound && isWarm(bound.pod) ? bound.pod : null;
  };
}
