import type { AuthenticationV1Api, V1UserInfo } from '@kubernetes/client-node';

/** How long an answer about a token is reused (with cachedFor): a pass makes many calls. */
export const TOKEN_CACHE_MS = 30_000;

/** Who a bearer token belongs to, for these audiences, as the API server says (TokenReview); null if it refuses it. */
export async function reviewToken(api: AuthenticationV1Api, token: string, audiences?: string[]): Promise<V1UserInfo | null> {
  const review = await api.createTokenReview({
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token, ...(audiences ? { audiences } : {}) } },
  });
  return review.status?.authenticated ? (review.status.user ?? null) : null;
}
