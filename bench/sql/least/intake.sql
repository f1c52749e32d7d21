-- pgbench: the least intake transaction (schema.sql). The job insert ON CONFLICT on (owner, key), the
-- first attempt and its outbox row, in one statement: one round trip, one transaction. A replayed key
-- inserts nothing (the conflict leaves the CTE empty, so no attempt and no outbox row follow), and the
-- 201 body can be built from RETURNING. Run with -M prepared, as JDBC does.
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
RETURNING job_id, attempt_id;
