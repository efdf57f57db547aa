import { WORKFLOW, type Workflow } from '../api/generated.js';
import { objectKey } from '../kube/object-key.js';
import type { ReconcileResult } from '../kube/work-queue.js';
import { writeReady } from '../ready-condition.js';
import { workflowReadiness } from '../workflow-source.js';
import { workflowScript, type ReadConfigMap } from '../workflow-script.js';
import type { ControllerContext } from './context.js';

/**
 * Workflows: their Ready condition (is the script there?), and the Handlers, Schedules and
 * waiting Runs that name one look again when it appears or its script changes.
 */
export class WorkflowController {
  /** The script each scriptFrom Workflow was last read with: an edited ConfigMap reaches its Handlers too. */
  private readonly scriptsRead = new Map<string, string>();

  constructor(
    private readonly context: ControllerContext,
    private readonly readConfigMap: ReadConfigMap,
    /** How soon a scriptFrom Workflow reads its ConfigMap again. */
    private readonly lookAgainMs: number,
  ) {}

  readonly handlers = {
    onAdd: (workflow: Workflow): void => this.changed(workflow),
    onUpdate: (workflow: Workflow): void => this.changed(workflow),
    onDelete: (workflow: Workflow): void => void this.scriptsRead.delete(objectKey(workflow)),
  };

  async reconcile(namespace: string | undefined, name: string): Promise<ReconcileResult | void> {
    const workflow = this.context.informers.workflows.get(namespace, name);
    if (!workflow) return;
    const script = await workflowScript(workflow, this.readConfigMap);
    await writeReady(this.context.resources, WORKFLOW.plural, workflow, workflowReadiness(workflow, script));
    if (!workflow.spec.scriptFrom) return;
    // A ConfigMap edited in place (no hash suffix) changes no Workflow, so no informer event tells
    // the Handlers and Schedules of it: they look again when the script read differs.
    const key = objectKey(workflow);
    const text = script.ok ? script.script : '';
    if (this.scriptsRead.has(key) && this.scriptsRead.get(key) !== text) this.dependentsLookAgain(workflow);
    this.scriptsRead.set(key, text);
    // Nothing tells the operator that a ConfigMap appeared or changed: it reads again soon (cached).
    return { requeueAfterMs: this.lookAgainMs };
  }

  /** Triggers and waiting Runs that name a Workflow look again when it appears or changes. */
  private changed(workflow: Workflow): void {
    this.context.enqueue('Workflow', workflow);
    this.dependentsLookAgain(workflow);
  }

  private dependentsLookAgain(workflow: Workflow): void {
    const { informers, enqueue } = this.context;
    const namespace = workflow.metadata.namespace;
    const name = workflow.metadata.name;
    const refers = (object: { spec: { workflowRef: { name: string } } }): boolean => object.spec.workflowRef.name === name;
    for (const handler of informers.handlers.list(namespace).filter(refers)) enqueue('Handler', handler);
    for (const schedule of informers.schedules.list(namespace).filter(refers)) enqueue('Schedule', schedule);
    for (const run of informers.runs.list(namespace).filter(refers)) if (!run.status?.runId || run.status.phase === 'Pending') enqueue('Run', run);
  }
}
