import type { AuthenticationV1Api, AuthorizationV1Api } from '@kubernetes/client-node';
import type { Access } from '../../server/context.js';
import { HttpError } from '../../server/http-error.js';
import { GROUP } from '../api/generated.js';
import { reviewToken, TOKEN_CACHE_MS } from './token-review.js';
import { cachedFor } from './ttl-cache.js';

/**
 * People's requests to the API: the bearer token says who they are (TokenReview), and RBAC says
 * whether they may (SubjectAccessReview on the hyperspool.dev resource in the run's namespace), so
 * `kubectl auth can-i update runs -n team-a` answers for `spool signal` too.
 */
export function userAuthorizer(
  authentication: AuthenticationV1Api,
  authorization: AuthorizationV1Api,
  /** The Run resource's name for a run id, so RBAC rules with resourceNames apply. */
  runName: (runId: string) => Promise<string | undefined>,
) {
  const userOf = cachedFor(TOKEN_CACHE_MS, (token) => reviewToken(authentication, token));
  return async (header: string, access: Access): Promise<{ user: string; groups: string[] }> => {
    const token = /^Bearer (.+)$/i.exec(header)?.[1];
    if (!token) throw new HttpError(401, 'unauthenticated', 'send a bearer token the cluster accepts (the CLI uses your kubeconfig)');
    const user = await userOf(token);
    if (!user) throw new HttpError(401, 'unauthenticated', 'the cluster did not accept the bearer token (TokenReview)');
    const name = access.name && access.resource === 'runs' ? await runName(access.name) : access.name;
    const review = await authorization.createSubjectAccessReview({
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: user.username ?? '',
          groups: user.groups ?? [],
          ...(user.uid ? { uid: user.uid } : {}),
          ...(user.extra ? { extra: user.extra } : {}),
          resourceAttributes: {
            group: GROUP,
            resource: access.resource,
            verb: access.verb,
            namespace: access.project,
            ...(name ? { name } : {}),
          },
        },
      },
    });
    if (!review.status?.allowed) {
      const what = `${access.verb} ${access.resource}.${GROUP}${name ? ` ${name}` : ''} in namespace ${access.project}`;
      throw new HttpError(403, 'forbidden', `${user.username ?? 'this user'} may not ${what}${review.status?.reason ? `: ${review.status.reason}` : ''}`);
    }
    // The groups too: a gate's approvers may name one (approval.approvers).
    return { user: user.username ?? '', groups: user.groups ?? [] };
  };
}
