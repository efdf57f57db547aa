-- An event's id is unique within its project (namespace), not across all of them: the same id in
-- two namespaces is two events, and one tenant's ids neither swallow another's events nor reveal
-- the runs they started.
alter table events drop constraint events_id_key;
alter table events add constraint events_project_id_key unique (project, id);
