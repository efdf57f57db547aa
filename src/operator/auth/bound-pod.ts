import type { AuthenticationV1Api, CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { TOKEN_AUDIENCE } from '../kube/pod-security.js';
import { reviewToken } from './token-review.js';

const POD_NAME = 'authentication.kubernetes.io/pod-name';
const POD_UID = 'authentication.kubernetes.io/pod-uid';

/**
 * The pod a projected service-account token (audience hyperspool) is bound to: TokenReview answers
 * its name and uid, and the pod of that name must still be the one of that uid. Null for a token
 * the API server refuses, one not bound to a pod, or a pod gone or replaced. What the pod may then
 * do is for its labels and its controller to say (agent-auth.ts, activity-auth.ts).
 */
export async function boundPod(authentication: AuthenticationV1Api, core: CoreV1Api, token: string): Promise<{ namespace: string; pod: V1Pod } | null> {
  const user = await reviewToken(authentication, token, [TOKEN_AUDIENCE]);
  const namespace = /^system:serviceaccount:([^:]+):/.exec(user?.username ?? '')?.[1];
  const podName = user?.extra?.[POD_NAME]?.[0];
  const podUid = user?.extra?.[POD_UID]?.[0];
  if (!namespace || !podName || !podUid) return null;
  const pod = await core.readNamespacedPod({ namespace, name: podName }).catch(() => null);
  if (!pod || pod.metadata?.uid !== podUid) return null;
  return { namespace, pod };
}
