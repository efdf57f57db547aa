import { CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { GROUP, VERSION } from './api/generated.js';
import { httpStatus } from './kube/request-options.js';

/** The hyperspool.dev resources, through the API server: the few calls the operator makes. */
export class Resources {
  private readonly api: CustomObjectsApi;

  constructor(kubeConfig: KubeConfig) {
    this.api = kubeConfig.makeApiClient(CustomObjectsApi);
  }

  async get<T>(plural: string, namespace: string, name: string): Promise<T | null> {
    try {
      return (await this.api.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural, name })) as T;
    } catch (error) {
      if (httpStatus(error) === 404) return null;
      throw error;
    }
  }

  /** The names of the objects with this label selector in a namespace. */
  async names(plural: string, namespace: string, labelSelector: string): Promise<string[]> {
    const list = (await this.api.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural, labelSelector })) as {
      items: { metadata: { name?: string } }[];
    };
    return list.items.map((item) => item.metadata.name ?? '');
  }

  /**
   * The names of the objects whose `label` has one of `values`, in a namespace, by that value: one
   * list per 50 values (a set-based selector, kept well inside a request line's length).
   */
  async namesByLabel(plural: string, namespace: string, label: string, values: string[]): Promise<Map<string, string>> {
    const names = new Map<string, string>();
    const lists = [];
    for (let i = 0; i < values.length; i += 50) {
      const labelSelector = `${label} in (${values.slice(i, i + 50).join(',')})`;
      lists.push(this.api.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural, labelSelector }) as Promise<{ items: { metadata: { name?: string; labels?: Record<string, string> } }[] }>);
    }
    for (const list of await Promise.all(lists)) {
      for (const { metadata } of list.items) {
        const value = metadata.labels?.[label];
        if (value && metadata.name) names.set(value, metadata.name);
      }
    }
    return names;
  }

  /** Creates the object; an object of that name already there is answered instead (409 is not an error). */
  async create<T extends { metadata: { name?: string } }>(plural: string, namespace: string, body: T): Promise<T> {
    try {
      return (await this.api.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural, body })) as T;
    } catch (error) {
      if (httpStatus(error) !== 409) throw error;
      const existing = await this.get<T>(plural, namespace, body.metadata.name ?? '');
      if (!existing) throw error;
      return existing;
    }
  }

  /** A JSON merge patch of the status subresource (only the operator writes status). */
  async patchStatus(plural: string, namespace: string, name: string, status: unknown): Promise<void> {
    await this.api.patchNamespacedCustomObjectStatus(
      { group: GROUP, version: VERSION, namespace, plural, name, body: { status } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  /**
   * Deletes the object if it is still the one of that uid (a Run recreated under the same name is
   * not touched); gone already is not an error. Its Jobs follow through their owner references.
   */
  async delete(plural: string, namespace: string, name: string, uid?: string): Promise<void> {
    try {
      await this.api.deleteNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural,
        name,
        propagationPolicy: 'Background',
        body: uid ? { preconditions: { uid } } : {},
      });
    } catch (error) {
      if (httpStatus(error) !== 404) throw error;
    }
  }

  /** A JSON merge patch of metadata (labels the operator adds). */
  async patchMetadata(plural: string, namespace: string, name: string, metadata: unknown): Promise<void> {
    await this.api.patchNamespacedCustomObject(
      { group: GROUP, version: VERSION, namespace, plural, name, body: { metadata } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }
}
