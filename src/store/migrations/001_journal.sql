-- Runs, their journals and everything a durable call can wait on or claim.
create table runs (
  id text primary key,
  project text not null,
  workflow text not null,
  interpreter text not null,
  script text not null,
  input jsonb,
  subject text,
  parent_id text,
  handler text,
  idempotency_key text,
  status text not null,
  awaiting text,
  wait jsonb,
  wake_at timestamptz,
  passes integer not null default 0,
  error text,
  outputs jsonb not null default '{}'::jsonb,
  lenient boolean not null default false,
  cwd text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  finished_at timestamptz
);
create unique index runs_idempotency on runs (project, idempotency_key) where idempotency_key is not null;
create index runs_due on runs (status, wake_at);
create index runs_parent on runs (parent_id);

-- Insert-only: a position is written once; a second write of it is ignored (first write wins).
create table journal (
  run_id text not null,
  position integer not null,
  kind text not null check (kind in ('call', 'result')),
  verb text not null,
  name text not null,
  occurrence integer not null,
  data jsonb not null,
  recorded_at timestamptz not null default now(),
  primary key (run_id, position, kind)
);

create table signals (
  seq bigserial primary key,
  run_id text not null,
  name text not null,
  payload text not null,
  sent_at timestamptz not null default now()
);
create index signals_queue on signals (run_id, name, seq);

create table events (
  seq bigserial primary key,
  id text not null unique,
  project text not null,
  type text not null,
  subject text,
  payload jsonb,
  emitted_at timestamptz not null default now()
);
create index events_type on events (project, type, seq);

create table cells (
  project text not null,
  scope text not null,
  key text not null,
  value text not null,
  version integer not null default 1,
  updated_at timestamptz not null default now(),
  primary key (project, scope, key)
);

-- The holder of a group is its oldest row: arrival order without a separate grant step.
create table leases (
  seq bigserial primary key,
  project text not null,
  grp text not null,
  run_id text not null,
  unique (project, grp, run_id)
);

create table activities (
  id text primary key,
  run_id text not null,
  name text not null,
  argv jsonb not null,
  cwd text,
  requires jsonb not null,
  max_attempts integer not null,
  backoff_ms integer not null,
  retry_on_exit jsonb,
  attempt integer not null default 0,
  status text not null,
  next_attempt_at timestamptz not null default now(),
  result jsonb,
  created_at timestamptz not null default now()
);
create index activities_due on activities (status, next_attempt_at);
create index activities_run on activities (run_id);

create table run_logs (
  seq bigserial primary key,
  run_id text not null,
  pass integer not null,
  text text not null,
  logged_at timestamptz not null default now()
);
create index run_logs_run on run_logs (run_id, seq);
