-- pgbench: what api-service sends PostgreSQL for one fresh POST /jobs (JobIntake.submit), statement for
-- statement: the job, its first attempt, the outbox row and the two timeline rows in one data-modifying
-- statement that also answers the budget's question; the 201 is built from what the service holds.
-- Run with -M prepared, as JDBC does. pgbench reads :name as a variable even inside quotes.
BEGIN;
WITH new_job AS (
  INSERT INTO job (id, owner_id, idempotency_key, input_digest, input, provider, fallback_providers, state, version,
                   created_at, updated_at, input_prompt_preview, input_repository_preview, input_base_ref_preview,
                   deadline)
  SELECT gen_random_uuid(), 'pgbench', 'pgbench-' || gen_random_uuid(),
         'sha256:4c4e0b1d5d2b0d8f0b1e0f9a3c2d1e0f4c4e0b1d5d2b0d8f0b1e0f9a3c2d1e0f',
         '{"baseRef":"main","prompt":"bench: fix the off-by-one","repository":"demo"}', 'fake-a',
         string_to_array('', ','), 'accepted', 0, now(), now(), 'bench: fix the off-by-one', 'demo', 'main', NULL
  ON CONFLICT (owner_id, idempotency_key) DO NOTHING RETURNING id, owner_id, provider, created_at),
new_attempt AS (
  INSERT INTO attempt (id, job_id, provider, state, request_key, version, created_at, updated_at)
  SELECT gen_random_uuid(), id, provider, 'starting', 'attempt-' || gen_random_uuid(), 0, created_at, created_at
  FROM new_job RETURNING id, job_id, created_at),
new_outbox AS (
  INSERT INTO outbox (attempt_id, job_id, owner_id, created_at, traceparent, tracestate, request_id)
  SELECT id, job_id, 'pgbench', created_at, NULL, NULL, 'pgbench' FROM new_attempt),
new_events AS (
  INSERT INTO job_event (job_id, owner_id, attempt_id, at, kind, detail)
  SELECT job_id, 'pgbench', attempt_id, at, kind, detail FROM (
    SELECT 1 AS place, id AS job_id, NULL::uuid AS attempt_id, created_at AS at, 'job.created' AS kind,
           'Idempotency-Key pgbench, owner pgbench' AS detail FROM new_job
    UNION ALL SELECT 2, job_id, id, created_at, 'attempt.requested', 'provider fake-a' FROM new_attempt) timeline
  ORDER BY place)
-- The owner's set budgets come back with the insert, for the early refusal (SpendBudgets.SET_BUDGETS).
SELECT (SELECT id FROM new_job) AS job_id, (SELECT id FROM new_attempt) AS attempt_id, set_budget.*
  FROM (SELECT array_agg(period) AS periods, array_agg(provider) AS providers, array_agg(limit_usd) AS limits,
               array_agg(soft_percent::integer) AS soft_percents
          FROM spend_budget WHERE owner_id = 'pgbench') set_budget \gset
COMMIT;
