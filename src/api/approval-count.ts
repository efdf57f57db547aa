/**
 * "1 of 2 approvals: alice", as the CLI, a chat message and the run page say how far a gate with
 * approvers (approval.approvers) has got. Plain code: the UI bundles this file.
 */
export function approvalCount(count: { counted: number; needed: number; by: (string | null)[] }): string {
  return `${count.counted} of ${count.needed} approval${count.needed === 1 ? '' : 's'}: ${count.by.map((each) => each ?? 'someone').join(', ')}`;
}
