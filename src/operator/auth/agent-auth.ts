import type { AuthenticationV1Api, CoreV1Api } from '@kubernetes/client-node';
import type { AgentIdentity } from '../../server/remote-passes.js';
import { LABELS, passJobName, runIdOf } from '../naming.js';
import { boundPod } from './bound-pod.js';
import { TOKEN_CACHE_MS } from './token-review.js';
import { cachedFor } from './ttl-cache.js';

/**
 * Maps an agent's projected service-account token to exactly one pass of one run: the token is
 * bound to its pod (TokenReview answers the pod's name and uid), and the pod's labels say which
 * run and pass it serves, and its controller is that pass's Job (named after the run's Run, which
 * `runName` finds). A token not bound to a pass's pod proves nothing.
 */
export function agentAuthenticator(
  authentication: AuthenticationV1Api,
  core: CoreV1Api,
  runName: (runId: string) => Promise<string | undefined>,
): (token: string) => Promise<AgentIdentity | null> {
  // The whole answer is kept, pod read included: every durable call of a pass brings its token.
  return cachedFor(TOKEN_CACHE_MS, async (token) => {
    const bound = await boundPod(authentication, core, token);
    if (!bound) return null;
    const { namespace, pod } = bound;
    const key = pod.metadata?.labels?.[LABELS.run];
    const pass = Number(pod.metadata?.labels?.[LABELS.pass]);
    if (!key || !Number.isInteger(pass)) return null;
    const runId = runIdOf(namespace, key);
    // Made by that pass's Job, not a pod someone labelled to look like one.
    const owner = pod.metadata?.ownerReferences?.find((reference) => reference.controller && reference.kind === 'Job');
    const name = owner ? await runName(runId) : undefined;
    if (name === undefined || owner?.name !== passJobName(name, pass)) return null;
    return { runId, pass };
  });
}
