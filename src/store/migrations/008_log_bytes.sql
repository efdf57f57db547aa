-- Output is bytes (DESIGN §9): a piece of a run's log that is not plain text (a NUL, bytes that
-- are not UTF-8) keeps its exact bytes here; `text` holds what a person reads of it.
alter table run_logs add column raw bytea;
