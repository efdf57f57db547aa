-- Indexes for the hot queries test/store/hot-queries.test.ts found reading more than their rows
-- beside tens of thousands of sleeping runs (issue 36, item 3).
-- The runs waiting on an event of one type in one project (listEventWaiters, at every event).
create index runs_event_waiters on runs (project, (wait->>'type'), created_at)
  where status = 'waiting' and wait->>'kind' = 'event';
-- The leases a run holds or queues in, released when it ends (releaseLeases).
create index leases_run on leases (run_id);
