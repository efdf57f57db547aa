-- The runs changed since a point in the database's time (listRunStatesChangedSince: the operator's
-- sweep, every second, reads only what changed since its last read): a range of this index, however
-- many runs there are (issue 36). updated_at is set by every write of a run's state.
create index runs_updated on runs (updated_at);
