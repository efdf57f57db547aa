import type { ResponseOf } from '../api/responses.js';
import { listGates, refusal } from './approvals.js';
import type { Caller } from './caller.js';
import type { ServerContext } from './context.js';

type WaitingApproval = ResponseOf<'GET /approvals/waiting'>['approvals'][number];

/**
 * Every gate waiting in the project that this person may answer now (the Approvals page, issue 33,
 * item 9), oldest first: a gate with approvers that names them or a group they are in, in a run
 * they did not submit, that they have not answered yet; and every gate without approvers, which
 * anyone allowed to change the run answers.
 */
export async function waitingApprovals(ctx: ServerContext, project: string, caller: Caller): Promise<WaitingApproval[]> {
  const waiting: WaitingApproval[] = [];
  for (const gateRun of await ctx.store.listWaitingGateRuns(project)) {
    const run = gateRun.parentId ? await ctx.store.getRun(gateRun.parentId) : null;
    if (!run) continue;
    const gate = (await listGates(ctx, run)).find((candidate) => candidate.runId === gateRun.id && candidate.state === 'waiting');
    if (!gate) continue;
    const { approvers } = gate;
    if (approvers && refusal(approvers, gate.job, run, caller, 'approve')) continue;
    if (approvers && gate.answers.some((answer) => answer.by === caller.user)) continue;
    const approvals = gate.answers.filter((answer) => answer.decision === 'approve').length;
    waiting.push({
      run: { id: run.id, workflow: run.workflow, subject: run.subject, submittedBy: run.submittedBy },
      gate,
      stillNeeded: (approvers?.count ?? 1) - approvals,
    });
  }
  return waiting;
}
