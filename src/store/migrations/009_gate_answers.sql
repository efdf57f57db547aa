-- Every answer to an approval gate (issue 28, bug 5): who, how, through what, when, with what form
-- values. The first is final, decided by this unique index in one statement, so two people
-- clicking at once (or the page and Slack) cannot both win; later answers are kept, not final.
create table gate_answers (
  seq bigserial primary key,
  run_id text not null,
  decision text not null,
  answered_by text,
  via text not null,
  answered_at timestamptz not null default now(),
  form_values jsonb,
  final boolean not null
);
create unique index gate_answers_first on gate_answers (run_id) where final;
create index gate_answers_run on gate_answers (run_id, seq);
