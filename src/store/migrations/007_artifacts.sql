-- Artifacts (docs/artifacts.md): what a run's `spool artifact put` stored. The metadata lives here
-- whatever holds the bytes; `artifact_parts` holds the bytes for the PostgreSQL backend, one row
-- per part the client sent (512 KiB by default), so no row is huge and a read streams part by part.
create table artifacts (
  run_id text not null,
  name text not null,
  position integer not null,
  size bigint not null,
  sha256 text not null,
  content_type text not null,
  blob_key text not null,
  parts integer not null,
  created_at timestamptz not null default now(),
  primary key (run_id, name)
);

create table artifact_parts (
  blob_key text not null,
  part integer not null,
  data bytea not null,
  primary key (blob_key, part)
);
