-- The recovery sweep's list of open jobs with a winner (an apply that stopped or was put back) as a
-- table a trigger keeps, in place of the partial index job_open_with_winner (V12).
--
-- That index read state, updated_at, winning_attempt_id and apply_retry_at, which a job's claim and
-- result change, so no update of a job was HOT (heap-only: no new index entries when no indexed
-- column changes): each wrote a new entry into every index of job (bench/ANALYSIS.md). A job enters
-- the list only when a transaction leaves it open with a winner (an apply outside the database,
-- a deferred or interrupted one); on the store applier's path the result's one update completes
-- the job, and the trigger's condition keeps its function from being called at all.
CREATE TABLE job_apply_pending (
    job_id uuid PRIMARY KEY REFERENCES job (id) ON DELETE CASCADE
);

CREATE FUNCTION job_apply_pending_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.winning_attempt_id IS NOT NULL AND NEW.state IN ('accepted', 'running', 'needs_review') THEN
        INSERT INTO job_apply_pending (job_id) VALUES (NEW.id) ON CONFLICT DO NOTHING;
    ELSE
        DELETE FROM job_apply_pending WHERE job_id = NEW.id;
    END IF;
    RETURN NULL;
END
$$;

-- Called only for an update that moves a job into or out of the list.
CREATE TRIGGER job_apply_pending AFTER UPDATE ON job FOR EACH ROW
    WHEN ((NEW.winning_attempt_id IS NOT NULL AND NEW.state IN ('accepted', 'running', 'needs_review'))
        IS DISTINCT FROM (OLD.winning_attempt_id IS NOT NULL AND OLD.state IN ('accepted', 'running', 'needs_review')))
    EXECUTE FUNCTION job_apply_pending_kept();

INSERT INTO job_apply_pending (job_id)
    SELECT id FROM job WHERE winning_attempt_id IS NOT NULL AND state IN ('accepted', 'running', 'needs_review');

DROP INDEX job_open_with_winner;

-- Room on each page for a row's next versions, so that its updates can stay on its page (HOT): a
-- job is updated twice on its way (claim, result), after the page it was inserted in filled up.
ALTER TABLE job SET (fillfactor = 85);
