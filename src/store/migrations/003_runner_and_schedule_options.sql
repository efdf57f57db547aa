-- What a run's passes need from their workflow besides the script (on a cluster: the image, env and
-- service account of a Workflow), copied with the script when a run, handler or schedule is made,
-- so a Workflow edited later never reaches a run already made.
alter table runs add column runner jsonb;
alter table handlers add column runner jsonb;
alter table schedules add column runner jsonb;

-- A schedule's own input for the runs it starts (null: the tick's name and time), and whether a
-- tick starts a run while the previous one is still going ('allow') or skips ('skip').
alter table schedules add column input jsonb;
alter table schedules add column overlap text not null default 'skip';
