-- Who submitted a run, where the server knows (the caller of POST /v1/runs): a gate that asks for
-- several approvers (approval.approvers) refuses that person's answer (issue 33, item 11).
alter table runs add column submitted_by text;
