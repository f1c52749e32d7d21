-- pgbench: the least whole pipeline of one job (schema.sql), from intake to completed with an
-- in-database apply: intake, the relay's delete, the conditional claim, and one result transaction.
-- Each is one statement, so one round trip and one transaction. Run with -M prepared.
-- pgbench reads :name as a variable even inside quotes: no such colons in literals.

-- intake (as intake.sql), keeping the ids
WITH job AS (
    INSERT INTO least.job (id, owner_id, idempotency_key, input_digest, input, provider, state, created_at, updated_at)
    VALUES (gen_random_uuid(), 'pgbench', 'pgbench-' || gen_random_uuid(),
            'sha256:4c4e0b1d5d2b0d8f0b1e0f9a3c2d1e0f4c4e0b1d5d2b0d8f0b1e0f9a3c2d1e0f',
            '{"baseRef":"main","prompt":"bench: fix the off-by-one","repository":"demo"}', 'fake-a', 'accepted',
            now(), now())
    ON CONFLICT (owner_id, idempotency_key) DO NOTHING
    RETURNING id, created_at),
attempt AS (
    INSERT INTO least.attempt (id, job_id, provider, state, created_at)
    SELECT gen_random_uuid(), id, 'fake-a', 'starting', created_at FROM job
    RETURNING id, job_id, created_at)
INSERT INTO least.outbox (attempt_id, job_id, created_at)
SELECT id, job_id, created_at FROM attempt
RETURNING id AS outbox_id, job_id, attempt_id \gset

-- relay: the broker confirmed the message, the row goes (a relay batches these; one row here)
DELETE FROM least.outbox WHERE id = :outbox_id;

-- claim: only an attempt still starting and not leased; zero rows would be a duplicate delivery
UPDATE least.attempt SET lease_owner = 'pgbench', lease_expires_at = now() + interval '5 minutes', version = version + 1
  WHERE id = :attempt_id AND state = 'starting' AND lease_owner IS NULL
  RETURNING version AS claimed_version \gset

-- result: the paid result (generation, usage) whatever else happens; the attempt's CAS on its
-- version; the job's CAS electing it (no winner yet); the apply key, only when this attempt won
WITH generation AS (
    INSERT INTO least.generation (attempt_id, patch, output_digest, created_at)
    VALUES (:attempt_id, convert_to(repeat('+ fixed line of the off-by-one patch\n', 8), 'UTF8'),
            'sha256:9f2c4e0b1d5d2b0d8f0b1e0f9a3c2d1e0f4c4e0b1d5d2b0d8f0b1e0f9a3c2d1e', now())
    ON CONFLICT (attempt_id) DO NOTHING),
usage AS (
    INSERT INTO least.usage_record (attempt_id, owner_id, prompt_tokens, completion_tokens, recorded_at)
    VALUES (:attempt_id, 'pgbench', 12, 34, now())
    ON CONFLICT (attempt_id) DO NOTHING),
attempt AS (
    UPDATE least.attempt
       SET state = 'succeeded', output_digest = 'sha256:9f2c4e0b1d5d2b0d8f0b1e0f9a3c2d1e0f4c4e0b1d5d2b0d8f0b1e0f9a3c2d1e',
           version = version + 1
     WHERE id = :attempt_id AND version = :claimed_version AND state = 'starting'
     RETURNING id, job_id),
job AS (
    UPDATE least.job SET winning_attempt_id = attempt.id, state = 'completed', version = version + 1, updated_at = now()
      FROM attempt
     WHERE job.id = attempt.job_id AND job.winning_attempt_id IS NULL AND job.version = 0
     RETURNING job.id, attempt.id AS attempt_id)
INSERT INTO least.applied_patch (idem_key, job_id, attempt_id, applied_at)
SELECT 'apply-' || CAST(attempt_id AS text), id, attempt_id, now() FROM job
ON CONFLICT (idem_key) DO NOTHING;
