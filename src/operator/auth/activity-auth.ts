import type { AuthenticationV1Api, CoreV1Api } from '@kubernetes/client-node';
import type { ActivityAgentIdentity } from '../../server/context.js';
import { ACTIVITY_NAME_ANNOTATION, LABELS, activityJobName, activityKey, runIdOf } from '../naming.js';
import { boundPod } from './bound-pod.js';
import { TOKEN_CACHE_MS } from './token-review.js';
import { cachedFor } from './ttl-cache.js';

/**
 * Maps an activity attempt's projected token to exactly one attempt of one activity of one run:
 * the token is bound to its pod (TokenReview answers its name and uid), the pod's labels and
 * annotation say which attempt, and its controller is that attempt's Job. As for passes
 * (agent-auth.ts), a token not bound to such a pod proves nothing.
 */
export function activityAuthenticator(
  authentication: AuthenticationV1Api,
  core: CoreV1Api,
): (token: string) => Promise<ActivityAgentIdentity | null> {
  return cachedFor(TOKEN_CACHE_MS, async (token) => {
    const bound = await boundPod(authentication, core, token);
    if (!bound) return null;
    const { namespace, pod } = bound;
    const labels = pod.metadata?.labels ?? {};
    const key = labels[LABELS.run];
    const attempt = Number(labels[LABELS.attempt]);
    const name = pod.metadata?.annotations?.[ACTIVITY_NAME_ANNOTATION];
    if (
      !key ||
      name === undefined ||
      !Number.isInteger(attempt) ||
      labels[LABELS.activity] !== activityKey(name)
    )
      return null;
    const runId = runIdOf(namespace, key);
    const owner = pod.metadata?.ownerReferences?.find((reference) => reference.controller && reference.kind === 'Job');
    if (owner?.name !== activityJobName(runId, name, attempt)) return null;
    return { runId, name, attempt };
  });
}
