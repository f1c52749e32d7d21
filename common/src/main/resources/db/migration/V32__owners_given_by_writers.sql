-- The owner triggers of outbox and job_event (V25, V26) fire only for a row written without its
-- owner. The writers on every job's path take the owner from the job row in the statement that
-- writes the rows (job intake's statement, JobEvents' insert), so it is the job's by construction;
-- a writer that leaves it out still gets it from the trigger, which fails when the job does not
-- exist. The trigger's call per row was a quarter of a timeline insert's execution time
-- (bench/ANALYSIS.md).
DROP TRIGGER outbox_owner ON outbox;
CREATE TRIGGER outbox_owner BEFORE INSERT ON outbox
    FOR EACH ROW WHEN (NEW.owner_id IS NULL) EXECUTE FUNCTION owner_of_the_job();

DROP TRIGGER job_event_owner ON job_event;
CREATE TRIGGER job_event_owner BEFORE INSERT ON job_event
    FOR EACH ROW WHEN (NEW.owner_id IS NULL) EXECUTE FUNCTION owner_of_the_job();
