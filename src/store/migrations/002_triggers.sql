-- What starts runs without a person: handlers (event type -> script) and schedules (every/cron -> script).
create table handlers (
  project text not null,
  name text not null,
  event_type text not null,
  workflow text not null,
  interpreter text not null,
  script text not null,
  cwd text,
  created_at timestamptz not null default now(),
  primary key (project, name)
);
create index handlers_type on handlers (project, event_type);

create table schedules (
  project text not null,
  name text not null,
  every_ms bigint,
  cron text,
  workflow text not null,
  interpreter text not null,
  script text not null,
  cwd text,
  next_at timestamptz not null,
  last_run_id text,
  skipped integer not null default 0,
  created_at timestamptz not null default now(),
  primary key (project, name)
);
create index schedules_due on schedules (next_at);

-- Evenly spaced starts per throttle key (GCRA): `tat` is when the key's budget is whole again.
create table throttles (
  project text not null,
  key text not null,
  tat timestamptz not null,
  primary key (project, key)
);
