-- A rerun (issue 31, item 3) names the run it reran and the step it reran from (null: from the
-- top); the old run lists its reruns through the index.
alter table runs add column rerun_of text;
alter table runs add column rerun_from_step text;
create index runs_rerun_of on runs (rerun_of) where rerun_of is not null;
