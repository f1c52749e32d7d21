-- job_event's primary key becomes (job_id, id), in place of (id) and the index job_event_by_job
-- (job_id, id): one index fewer on the table every job writes most rows to (seven a job), so one
-- entry fewer for each (bench/ANALYSIS.md).
--
-- No query reads an event by its id alone: a job's timeline and stream read by job_id, after an id
-- or a cursor; the feed by owner_id (job_event_feed); a webhook delivery names its event's job as
-- well as the event, and its foreign key now takes both. The ids still come from the table's
-- sequence only (no writer gives one), which keeps them unique and in the order they were written.
ALTER TABLE webhook_delivery DROP CONSTRAINT webhook_delivery_event_id_fkey;
ALTER TABLE job_event DROP CONSTRAINT job_event_pkey;
DROP INDEX job_event_by_job;
ALTER TABLE job_event ADD CONSTRAINT job_event_pkey PRIMARY KEY (job_id, id);
-- A test delivery has neither job nor event, and then nothing is checked (MATCH SIMPLE).
ALTER TABLE webhook_delivery ADD CONSTRAINT webhook_delivery_event_fkey
    FOREIGN KEY (job_id, event_id) REFERENCES job_event (job_id, id);
