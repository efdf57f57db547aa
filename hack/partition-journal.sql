-- Makes the journal a hash-partitioned table, PARTITION BY HASH (run_id), keeping its rows
-- (docs/scaling.md, "The journal partitioned by run"). Every query of a run's journal names its
-- run_id, so each reads one partition; the partitions can then be vacuumed, moved to other
-- tablespaces, or be a distributed PostgreSQL's shards one by one.
--
-- Run it once, on a database the store has migrated (start spool or the operator once first),
-- with the engine stopped (it locks the journal while it copies it):
--
--   psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -c 'set spool.journal_partitions = 16' -f hack/partition-journal.sql
--
-- The number of partitions is spool.journal_partitions (16 when unset). Run again, it changes
-- nothing. test/store/partitioned-journal.test.ts runs the store's contract, a run of steps,
-- sleeps and signals, and the hot queries' plans on this layout.
begin;
lock table journal in access exclusive mode;
do $$
declare
  partitions integer := coalesce(nullif(current_setting('spool.journal_partitions', true), ''), '16')::integer;
begin
  if (select relkind from pg_class where oid = 'journal'::regclass) = 'p' then
    raise notice 'the journal is partitioned already: nothing to do';
    return;
  end if;
  if partitions not between 1 and 1024 then
    raise exception 'spool.journal_partitions must be 1 to 1024, not %', partitions;
  end if;
  alter table journal rename to journal_unpartitioned;
  alter index journal_pkey rename to journal_unpartitioned_pkey;
  -- Columns, defaults, the check on kind, and the primary key (run_id, position, kind), which holds
  -- the partition key as a partitioned table's unique keys must.
  create table journal (like journal_unpartitioned including all) partition by hash (run_id);
  for remainder in 0 .. partitions - 1 loop
    execute format('create table %I partition of journal for values with (modulus %s, remainder %s)',
                   'journal_p' || remainder, partitions, remainder);
  end loop;
  insert into journal select * from journal_unpartitioned;
  drop table journal_unpartitioned;
end $$;
commit;
