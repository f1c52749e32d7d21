-- pgbench: every transaction one job costs PostgreSQL from POST /jobs to completed with the store applier:
-- api intake, outbox relay, then the worker's two steps (AttemptSteps): the claim, and after the provider's
-- answer the record that stores, elects, applies and completes. Same statements and transaction
-- boundaries as the services (their log_statement output); no HTTP, no broker.
-- Run with -M prepared. pgbench reads :name as a variable even inside quotes: no such colons in literals.

-- api-service: JobIntake.submit (as in intake.sql)
BEGIN;
WITH new_job AS (
  INSERT INTO job (id, owner_id, idempotency_key, input_digest, input, provider, fallback_providers, state, version,
                   created_at, updated_at, input_prompt_preview, input_repository_preview, input_base_ref_preview,
                   deadline)
  SELECT gen_random_uuid(), 'pgbench', 'pgbench-' || gen_random_uuid(),
         'sha256:4c4e0b1d5d2b0d8f0b1e0f9a3c2d1e0f4c4e0b1d5d2b0d8f0b1e0f9a3c2d1e0f',
         '{"baseRef":"main","prompt":"bench: fix the off-by-one","repository":"demo"}', 'fake-a',
         string_to_array('', ','), 'accepted', 0, now(), now(), 'bench: fix the off-by-one', 'demo', 'main', NULL
  ON CONFLICT (owner_id, idempotency_key) DO NOTHING RETURNING id, provider, created_at),
new_attempt AS (
  INSERT INTO attempt (id, job_id, provider, state, request_key, version, created_at, updated_at)
  SELECT gen_random_uuid(), id, provider, 'starting', 'attempt-' || gen_random_uuid(), 0, created_at, created_at
  FROM new_job RETURNING id, job_id, created_at),
new_outbox AS (
  INSERT INTO outbox (attempt_id, job_id, created_at, traceparent, tracestate, request_id)
  SELECT id, job_id, created_at, NULL, NULL, 'pgbench' FROM new_attempt),
new_events AS (
  INSERT INTO job_event (job_id, attempt_id, at, kind, detail)
  SELECT job_id, attempt_id, at, kind, detail FROM (
    SELECT 1 AS place, id AS job_id, NULL::uuid AS attempt_id, created_at AS at, 'job.created' AS kind,
           'Idempotency-Key pgbench, owner pgbench' AS detail FROM new_job
    UNION ALL SELECT 2, job_id, id, created_at, 'attempt.requested', 'provider fake-a' FROM new_attempt) timeline
  ORDER BY place)
SELECT (SELECT id FROM new_job) AS job_id, (SELECT id FROM new_attempt) AS attempt_id \gset
-- The budget's question, asked after the insert (a refusal rolls it back): the owner's money budgets.
SELECT period, provider, limit_usd, soft_percent FROM spend_budget WHERE owner_id = 'pgbench';
COMMIT;

-- api-service: OutboxRelay round (it batches up to 100 rows; one row here)
BEGIN;
SELECT id AS outbox_id FROM outbox WHERE attempt_id = :attempt_id AND sent_at IS NULL FOR UPDATE SKIP LOCKED \gset
UPDATE outbox SET sent_at = now(), publish_attempts = publish_attempts + 1 WHERE id = ANY(ARRAY[CAST(:outbox_id AS bigint)]);
COMMIT;

-- worker-service: the claim (AttemptSteps.load, ClaimStep.decide); the claim's row stands for the delivery's
BEGIN;
SELECT a.*, j.* FROM attempt a, job j WHERE a.id = :attempt_id AND j.id = a.job_id;
SELECT 1 FROM provider_pause WHERE provider = 'fake-a' FOR SHARE;
SELECT id, input_usd_per_mtok, output_usd_per_mtok FROM provider_price
  WHERE provider = 'fake-a' AND model = 'fake-a' AND effective_from <= now()
  ORDER BY effective_from DESC, id DESC LIMIT 1;
SELECT period, provider, limit_usd, soft_percent FROM spend_budget WHERE owner_id = 'pgbench';
SELECT max_in_flight FROM owner_share WHERE owner_id = 'pgbench';
SELECT state, limited_until, limited_until > statement_timestamp(), limit_reason, retry_at, last_fault
  FROM provider_health WHERE provider = 'fake-a';
UPDATE attempt SET lease_owner = 'pgbench', lease_expires_at = statement_timestamp() + interval '30 seconds',
                   sent_at = now(), updated_at = now(), version = version + 1, price_id = NULL, reserved_usd = NULL,
                   reserved_in = '{}', reservation_open = false
  WHERE id = :attempt_id AND state = 'starting' AND lease_owner IS NULL
    AND NOT EXISTS (SELECT 1 FROM generation WHERE attempt_id = :attempt_id);
UPDATE job SET cancel_reason = NULL, review_reason = NULL, state = 'running', updated_at = now(), version = 1,
               winning_attempt_id = NULL
  WHERE id = :job_id AND version = 0;
INSERT INTO job_event (job_id, attempt_id, at, kind, detail)
  VALUES (:job_id, :attempt_id, now(), 'attempt.claimed', 'by pgbench, request sent');
COMMIT;

-- worker-service: the record (RecordStep, ElectionStep, ApplyStep with the store applier)
BEGIN;
SELECT a.*, j.* FROM attempt a, job j WHERE a.id = :attempt_id AND j.id = a.job_id;
INSERT INTO generation (attempt_id, patch, output_digest, created_at)
  VALUES (:attempt_id, convert_to(repeat('+ fixed line of the off-by-one patch\n', 8), 'UTF8'),
          'sha256:9f2c4e0b1d5d2b0d8f0b1e0f9a3c2d1e0f4c4e0b1d5d2b0d8f0b1e0f9a3c2d1e', now())
  ON CONFLICT (attempt_id) DO NOTHING;
INSERT INTO usage_record (attempt_id, owner_id, provider, prompt_tokens, completion_tokens, source, recorded_at)
  VALUES (:attempt_id, 'pgbench', 'fake-a', 12, 34, 'provider_reported', now()) ON CONFLICT (attempt_id) DO NOTHING;
SELECT 1 FROM job WHERE id = :job_id AND version = 1 FOR UPDATE;
INSERT INTO applied_patch (idem_key, job_id, attempt_id, scope, status, created_at)
  VALUES ('apply-' || CAST(:attempt_id AS text), :job_id, :attempt_id, 'store', 'pending', now())
  ON CONFLICT (idem_key) DO NOTHING;
UPDATE applied_patch SET status = 'applied', target_ref = 'store-pgbench', applied_at = now()
  WHERE idem_key = 'apply-' || CAST(:attempt_id AS text) AND status = 'pending';
UPDATE attempt SET lease_expires_at = NULL, lease_owner = NULL, remote_id = 'chatcmpl-pgbench',
                   output_digest = 'sha256:9f2c4e0b1d5d2b0d8f0b1e0f9a3c2d1e0f4c4e0b1d5d2b0d8f0b1e0f9a3c2d1e',
                   reason = NULL, reviewed_by = NULL, sent_at = now(), state = 'succeeded', updated_at = now(), version = 2
  WHERE id = :attempt_id AND version = 1;
UPDATE job SET cancel_reason = NULL, review_reason = NULL, state = 'completed', updated_at = now(), version = 2,
               winning_attempt_id = :attempt_id
  WHERE id = :job_id AND version = 1;
INSERT INTO job_event (job_id, attempt_id, at, kind, detail)
  VALUES (:job_id, :attempt_id, now(), 'generation.stored', 'sha256:9f2c, remote id chatcmpl-pgbench; usage provider_reported: 12 prompt + 34 completion tokens');
INSERT INTO job_event (job_id, attempt_id, at, kind, detail)
  VALUES (:job_id, :attempt_id, now(), 'winner.elected', 'output sha256:9f2c');
INSERT INTO job_event (job_id, attempt_id, at, kind, detail)
  VALUES (:job_id, :attempt_id, now(), 'apply.done', 'key apply, target store-pgbench');
INSERT INTO job_event (job_id, attempt_id, at, kind, detail) VALUES (:job_id, :attempt_id, now(), 'job.completed', NULL);
COMMIT;
