import type { AuthenticationV1Api, CoreV1Api } from '@kubernetes/client-node';
import type { AgentIdentity } from '../../server/remote-passes.js';
import { TOKEN_AUDIENCE } from '../passes/job-builder.js';
import { LABELS, passJobName, runIdOf } from '../naming.js';
import { reviewToken, TOKEN_CACHE_MS } from './token-review.js';
import { cachedFor } from './ttl-cache.js';

const POD_NAME = 'authentication.kubernetes.io/pod-name';
const POD_UID = 'authentication.kubernetes.io/pod-uid';

/**
 * Maps an agent's projected service-account token to exactly one pass of one run: the token is
 * bound to its pod (TokenReview answers the pod's name and uid), and the pod's labels say which
 * run and pass it serves, and its controller is that pass's Job. A token not bound to a pass's pod
 * proves nothing.
 */
export function agentAuthenticator(authentication: AuthenticationV1Api, core: CoreV1Api): (token: string) => Promise<AgentIdentity | null> {
  // The whole answer is kept, pod read included: every durable call of a pass brings its token.
  return cachedFor(TOKEN_CACHE_MS, async (token) => {
    const user = await reviewToken(authentication, token, [TOKEN_AUDIENCE]);
    const namespace = /^system:serviceaccount:([^:]+):/.exec(user?.username ?? '')?.[1];
    const podName = user?.extra?.[POD_NAME]?.[0];
    const podUid = user?.extra?.[POD_UID]?.[0];
    if (!namespace || !podName || !podUid) return null;
    const pod = await core.readNamespacedPod({ namespace, name: podName }).catch(() => null);
    if (!pod || pod.metadata?.uid !== podUid) return null;
    const key = pod.metadata.labels?.[LABELS.run];
    const pass = Number(pod.metadata.labels?.[LABELS.pass]);
    if (!key || !Number.isInteger(pass)) return null;
    const runId = runIdOf(namespace, key);
    // Made by that pass's Job, not a pod someone labelled to look like one.
    const owner = pod.metadata.ownerReferences?.find((reference) => reference.controller && reference.kind === 'Job');
    if (owner?.name !== passJobName(runId, pass)) return null;
    return { runId, pass };
  });
}
