import type { V1OwnerReference, V1PodSecurityContext, V1SecurityContext, V1Volume } from '@kubernetes/client-node';

/**
 * What every pod the operator makes has in common, passes and activity attempts alike: what the
 * restricted Pod Security Standard asks, the Run that owns it, and the one credential it holds.
 */

/** The native client in the runner image (images/Dockerfile, hack/images.sh put it there). */
export const RUNNER_CLIENT = '/usr/local/lib/hyperspool/spool';
/** An activity attempt's reporter beside it (sdk/go/cmd/spool-activity-attempt). */
export const RUNNER_ACTIVITY_REPORTER = '/usr/local/lib/hyperspool/spool-activity-attempt';
/** Where a pod's audience-bound token is mounted; its agent or client reads `token` there. */
export const TOKEN_DIR = '/var/run/secrets/hyperspool';
export const TOKEN_AUDIENCE = 'hyperspool';

/**
 * An image of the user's may default to root: every container runs as 1000 (the runner image's
 * user) unless it says otherwise.
 */
export const RESTRICTED_POD: V1PodSecurityContext = {
  runAsNonRoot: true,
  runAsUser: 1000,
  runAsGroup: 1000,
  seccompProfile: { type: 'RuntimeDefault' },
};

export const RESTRICTED_CONTAINER: V1SecurityContext = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } };

/** The Run resource a Job belongs to: deleting the Run deletes its Jobs. */
export interface JobOwner {
  name: string;
  uid: string;
}

export function ownedByRun(owner: JobOwner): V1OwnerReference[] {
  return [{ apiVersion: 'hyperspool.dev/v1alpha1', kind: 'Run', name: owner.name, uid: owner.uid, controller: true, blockOwnerDeletion: true }];
}

/**
 * The pod's only credential (the ServiceAccount's own token is not mounted): a token for the
 * operator's API alone, bound to this pod, which the operator checks on every call.
 */
export const TOKEN_VOLUME: V1Volume = {
  name: 'token',
  projected: { sources: [{ serviceAccountToken: { audience: TOKEN_AUDIENCE, expirationSeconds: 3600, path: 'token' } }] },
};
