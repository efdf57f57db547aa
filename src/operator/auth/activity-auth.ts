import type { AuthenticationV1Api, CoreV1Api } from '@kubernetes/client-node';
import type { ActivityAgentIdentity } from '../../server/activity-report-routes.js';
import { TOKEN_AUDIENCE } from '../passes/job-builder.js';
import { ACTIVITY_NAME_ANNOTATION, LABELS, activityJobName, activityKey, runIdOf } from '../naming.js';
import { reviewToken, TOKEN_CACHE_MS } from './token-review.js';
import { cachedFor } from './ttl-cache.js';

const POD_NAME = 'authentication.kubernetes.io/pod-name';
const POD_UID = 'authentication.kubernetes.io/pod-uid';

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
    const user = await reviewToken(authentication, token, [TOKEN_AUDIENCE]);
    const namespace = /^system:serviceaccount:([^:]+):/.exec(user?.username ?? '')?.[1];
    const podName = user?.extra?.[POD_NAME]?.[0];
    const podUid = user?.extra?.[POD_UID]?.[0];
    if (!namespace || !podName || !podUid) return null;
    const pod = await core.readNamespacedPod({ namespace, name: podName }).catch(() => null);
    if (!pod || pod.metadata?.uid !== podUid) return null;
    const key = pod.metadata.labels?.[LABELS.run];
    const attempt = Number(pod.metadata.labels?.[LABELS.attempt]);
    const name = pod.metadata.annotations?.[ACTIVITY_NAME_ANNOTATION];
    if (
      !key ||
      name === undefined ||
      !Number.isInteger(attempt) ||
      pod.metadata.labels?.[LABELS.activity] !== activityKey(name)
    )
      return null;
    const runId = runIdOf(namespace, key);
    const owner = pod.metadata.ownerReferences?.find((reference) => reference.controller && reference.kind === 'Job');
    if (owner?.name !== activityJobName(runId, name, attempt)) return null;
    return { runId, name, attempt };
  });
}
