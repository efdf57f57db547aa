import type { CoreV1Api } from '@kubernetes/client-node';
import { API_VERSION } from '../api/generated.js';

export interface EventTarget {
  kind: string;
  name: string;
  namespace: string;
  uid?: string;
}

/** Kubernetes Events on our resources (`kubectl describe run` and `kubectl get events` show them). */
export class EventRecorder {
  constructor(private readonly core: CoreV1Api) {}

  async record(target: EventTarget, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    const now = new Date();
    await this.core.createNamespacedEvent({
      namespace: target.namespace,
      body: {
        metadata: { generateName: `${target.name}.`, namespace: target.namespace },
        involvedObject: { apiVersion: API_VERSION, kind: target.kind, name: target.name, namespace: target.namespace, ...(target.uid ? { uid: target.uid } : {}) },
        type,
        reason,
        message: message.slice(0, 1024),
        source: { component: 'hyperspool-operator' },
        reportingComponent: 'hyperspool.dev/operator',
        reportingInstance: process.env.HOSTNAME ?? 'hyperspool-operator',
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
      },
    });
  }
}
