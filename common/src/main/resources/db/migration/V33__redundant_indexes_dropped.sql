-- Two indexes every job paid for and no query needs. Each row a job writes to attempt or outbox, and
-- each update of them (none of which is HOT: they change columns other indexes hold), adds an entry to
-- every index of its table (bench/ANALYSIS.md).
--
-- attempt_by_job (job_id, created_at): the reads of a job's attempts (job views, the open-attempt
-- checks, the foreign key from job) find them through attempt_job_idempotency_key_unique, which
-- leads with job_id; a job has a handful of attempts, sorted by created_at after.
DROP INDEX attempt_by_job;

-- outbox_unsent (id) WHERE sent_at IS NULL: the relay reads the unsent rows owner by owner through
-- outbox_unsent_by_owner (owner_id, id) with the same predicate (V25), which also counts them.
DROP INDEX outbox_unsent;
