-- Push (issue 34, docs/design.md "Push"): the events feed (GET /events) and a job's stream
-- (GET /jobs/{id}/events) read job_event in an order a cursor can follow without ever skipping a
-- row: by the id of the transaction that wrote it (tx), then id, and only rows whose transaction is
-- older than every transaction still running (pg_snapshot_xmin). A bigserial alone cannot be
-- followed: a row with a lower id may commit after a higher one was read.
ALTER TABLE job_event ADD COLUMN tx xid8 NOT NULL DEFAULT pg_current_xact_id();

-- Each row carries its job's owner, for the feed's one-owner reads, set by the trigger function
-- V25 wrote for the outbox (it reads NEW.job_id and sets NEW.owner_id, whatever the table), renamed
-- for what it now serves; the outbox's trigger follows the rename.
ALTER TABLE job_event ADD COLUMN owner_id text;
UPDATE job_event e SET owner_id = j.owner_id FROM job j WHERE j.id = e.job_id;
ALTER TABLE job_event ALTER COLUMN owner_id SET NOT NULL;

ALTER FUNCTION outbox_owner() RENAME TO owner_of_the_job;
CREATE TRIGGER job_event_owner BEFORE INSERT ON job_event FOR EACH ROW EXECUTE FUNCTION owner_of_the_job();

CREATE INDEX job_event_feed ON job_event (owner_id, tx, id);
