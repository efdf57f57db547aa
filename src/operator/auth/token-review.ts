import type { AuthenticationV1Api, V1UserInfo } from '@kubernetes/client-node';

/** How long an answer of the API server about a token is reused: a pass makes many calls. */
const CACHE_MS = 30_000;

/**
 * Asks the API server who a bearer token belongs to (TokenReview), for the given audience, and
 * remembers the answer briefly.
 */
export class TokenReviewer {
  private readonly cache = new Map<string, { user: V1UserInfo | null; until: number }>();

  constructor(
    private readonly api: AuthenticationV1Api,
    private readonly audiences?: string[],
  ) {}

  async review(token: string): Promise<V1UserInfo | null> {
    const now = Date.now();
    const cached = this.cache.get(token);
    if (cached && cached.until > now) return cached.user;
    const review = await this.api.createTokenReview({
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token, ...(this.audiences ? { audiences: this.audiences } : {}) } },
    });
    const user = review.status?.authenticated ? (review.status.user ?? null) : null;
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(token, { user, until: now + CACHE_MS });
    return user;
  }
}
