-- What the run page reads: the pass that recorded each journal entry (a later pass replays it), and
-- the runs list paged newest first by (created_at, id), so the 10,000th run is as quick to reach as
-- the first.
alter table journal add column pass integer;
create index runs_created on runs (created_at desc, id desc);
create index runs_project_created on runs (project, created_at desc, id desc);
