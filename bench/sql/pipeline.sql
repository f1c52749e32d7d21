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

-- api-service: OutboxRelay round (it batches up to 100 rows; one row here)
BEGIN;
SELECT id AS outbox_id FROM outbox WHERE attempt_id = :attempt_id AND sent_at IS NULL FOR UPDATE SKIP LOCKED \gset
UPDATE outbox SET sent_at = now(), publish_attempts = publish_attempts + 1 WHERE id = ANY(ARRAY[CAST(:outbox_id AS bigint)]);
COMMIT;

-- worker-service: the claim (AttemptSteps.load, ClaimStep.decide); the claim's row stands for the delivery's
BEGIN;
SELECT a.*, j.* FROM attempt a JOIN job j ON j.id = a.job_id WHERE a.id = :attempt_id;
-- ClaimConditions: the provider's pause, the owner's cap, the provider's health and price, the owner's budgets.
SELECT EXISTS (SELECT 1 FROM provider_pause WHERE provider = 'fake-a' FOR SHARE),
       (SELECT max_in_flight FROM owner_share WHERE owner_id = 'pgbench'), h.provider IS NOT NULL, h.state,
       h.limited_until, h.limited_until > statement_timestamp(), h.limit_reason, h.retry_at, h.last_fault,
       p.id, p.input_usd_per_mtok, p.output_usd_per_mtok, b.periods, b.providers, b.limits, b.soft_percents
  FROM (VALUES (1)) AS one (one)
  LEFT JOIN provider_health h ON h.provider = 'fake-a'
  LEFT JOIN LATERAL (SELECT id, input_usd_per_mtok, output_usd_per_mtok FROM provider_price
                      WHERE provider = 'fake-a' AND model = 'fake-a' AND effective_from <= now()
                      ORDER BY effective_from DESC, id DESC LIMIT 1) p ON true
  CROSS JOIN LATERAL (SELECT array_agg(period) AS periods, array_agg(provider) AS providers,
                             array_agg(limit_usd) AS limits, array_agg(soft_percent::integer) AS soft_percents
                        FROM spend_budget WHERE owner_id = 'pgbench') b;
-- The claim and the job's start to running in one statement (AttemptWork.claim).
WITH claimed AS (
  UPDATE attempt SET lease_owner = 'pgbench', lease_expires_at = statement_timestamp() + 30000 * interval '1 millisecond',
                     sent_at = now(), updated_at = now(), version = version + 1, price_id = NULL, reserved_usd = NULL,
                     reserved_in = '{}', reservation_open = false
    WHERE id = :attempt_id AND state = 'starting' AND lease_owner IS NULL
      AND NOT EXISTS (SELECT 1 FROM generation WHERE attempt_id = :attempt_id)
  RETURNING 1),
started AS (
  UPDATE job SET state = 'running', updated_at = now(), version = version + 1
    WHERE id = :job_id AND version = 0 AND EXISTS (SELECT 1 FROM claimed)
  RETURNING 1)
SELECT EXISTS (SELECT 1 FROM claimed), EXISTS (SELECT 1 FROM started);
-- The transaction's timeline rows in one statement (JobEvents), before the commit.
INSERT INTO job_event (job_id, owner_id, attempt_id, at, kind, detail)
  SELECT job_id::uuid, (SELECT owner_id FROM job WHERE id = recorded.job_id::uuid), attempt_id::uuid, at::timestamptz,
         kind, detail
  FROM unnest(ARRAY[CAST(:job_id AS text)], ARRAY[CAST(:attempt_id AS text)], ARRAY[CAST(now() AS text)],
              ARRAY['attempt.claimed'], ARRAY['by pgbench, request sent'])
  WITH ORDINALITY AS recorded (job_id, attempt_id, at, kind, detail, n) ORDER BY n;
COMMIT;

-- worker-service: the record (RecordStep, ElectionStep, ApplyStep with the store applier)
BEGIN;
SELECT a.*, j.* FROM attempt a JOIN job j ON j.id = a.job_id WHERE a.id = :attempt_id;
-- The answer: the generation and the usage row in one statement (AttemptWork.storeAnswer).
WITH generation_stored AS (
  INSERT INTO generation (attempt_id, patch, output_digest, created_at)
  VALUES (:attempt_id, convert_to(repeat('+ fixed line of the off-by-one patch\n', 8), 'UTF8'),
          'sha256:9f2c4e0b1d5d2b0d8f0b1e0f9a3c2d1e0f4c4e0b1d5d2b0d8f0b1e0f9a3c2d1e', now())
  ON CONFLICT (attempt_id) DO NOTHING RETURNING 1),
usage_stored AS (
  INSERT INTO usage_record (attempt_id, owner_id, provider, prompt_tokens, completion_tokens, source, recorded_at)
  VALUES (:attempt_id, 'pgbench', 'fake-a', 12, 34, 'provider_reported', now())
  ON CONFLICT (attempt_id) DO NOTHING RETURNING 1)
SELECT EXISTS (SELECT 1 FROM generation_stored), EXISTS (SELECT 1 FROM usage_stored);
-- The store applier's key, reserved and recorded applied by one insert (AttemptWork.reserveApplied).
INSERT INTO applied_patch (idem_key, job_id, attempt_id, scope, status, target_ref, created_at, applied_at)
  VALUES ('apply-' || CAST(:attempt_id AS text), :job_id, :attempt_id, 'store', 'applied', 'store-pgbench', now(), now())
  ON CONFLICT (idem_key) DO NOTHING;
-- The attempt's write-back, then the election's (Hibernate's stateless update on the job's @Version).
UPDATE attempt SET state = 'succeeded', remote_id = 'chatcmpl-pgbench',
                   output_digest = 'sha256:9f2c4e0b1d5d2b0d8f0b1e0f9a3c2d1e0f4c4e0b1d5d2b0d8f0b1e0f9a3c2d1e',
                   reason = NULL, reviewed_by = NULL, updated_at = now(), version = version + 1
  WHERE id = :attempt_id AND version = 1;
UPDATE job SET cancel_reason = NULL, review_reason = NULL, state = 'completed', updated_at = now(), version = 2,
               winning_attempt_id = :attempt_id
  WHERE id = :job_id AND version = 1;
INSERT INTO job_event (job_id, owner_id, attempt_id, at, kind, detail)
  SELECT job_id::uuid, (SELECT owner_id FROM job WHERE id = recorded.job_id::uuid), attempt_id::uuid, at::timestamptz,
         kind, detail
  FROM unnest(ARRAY[CAST(:job_id AS text), CAST(:job_id AS text), CAST(:job_id AS text), CAST(:job_id AS text)],
              ARRAY[CAST(:attempt_id AS text), CAST(:attempt_id AS text), CAST(:attempt_id AS text),
                    CAST(:attempt_id AS text)],
              ARRAY[CAST(now() AS text), CAST(now() AS text), CAST(now() AS text), CAST(now() AS text)],
              ARRAY['generation.stored', 'winner.elected', 'apply.done', 'job.completed'],
              ARRAY['sha256:9f2c, remote id chatcmpl-pgbench; usage provider_reported: 12 prompt + 34 completion tokens',
                    'output sha256:9f2c', 'key apply, target store-pgbench', NULL])
  WITH ORDINALITY AS recorded (job_id, attempt_id, at, kind, detail, n) ORDER BY n;
COMMIT;
