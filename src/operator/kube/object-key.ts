import type { KubernetesObject } from '@kubernetes/client-node';

/**
 * `namespace/name`, or `name` for a cluster-scoped object: client-go's MetaNamespaceKeyFunc, so
 * informer caches and work queues agree on one key per object.
 */
export function objectKey(object: KubernetesObject): string {
  return keyOf(object.metadata?.namespace, object.metadata?.name ?? '');
}

export function keyOf(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

/** The inverse of objectKey. Names cannot contain `/`, so the first one splits. */
export function splitKey(key: string): { namespace: string | undefined; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { namespace: undefined, name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
