-- A schedule can be suspended (issue 33, item 9): while `suspended_at` is set it makes no ticks and
-- has no next tick; resuming counts the next tick from then, so missed ticks are not made up.
alter table schedules add column suspended_at timestamptz;

-- The schedule that started a run (a tick or `spool schedule trigger`), so the Schedules page can
-- list each schedule's last runs from an index rather than from every run's input.
alter table runs add column schedule text;
create index runs_schedule on runs (project, schedule, created_at desc) where schedule is not null;
-- The one run each schedule names already is known to be its; older ones cannot be told apart
-- from runs given the same input by hand.
update runs set schedule = schedules.name from schedules where runs.id = schedules.last_run_id;
