-- pgbench: every transaction one job costs PostgreSQL from POST /jobs to completed with the store applier:
-- api intake, outbox relay, then the worker's AttemptPipeline (decide+claim, provider request, record,
-- elect, apply reserve, apply done). Same statements and transaction boundaries; no HTTP, no broker.
-- Run with -M prepared. pgbench reads :name as a variable even inside quotes: no such colons in literals.

-- api-service: JobIntake.submit (as in intake.sql)
BEGIN;
INSERT INTO job (id, owner_id, idempotency_key, input_digest, input, provider, state, version, created_at, updated_at)
  VALUES (gen_random_uuid(), 'pgbench', 'pgbench-' || gen_random_uuid(),
          'sha256:4c4e0b1d5d2b0d8f0b1e0f9a3c2d1e0f4c4e0b1d5d2b0d8f0b1e0f9a3c2d1e0f',
          '{"baseRef":"main","prompt":"bench: fix the off-by-one","repository":"demo"}', 'fake-a', 'accepted', 0,
          now(), now())
  ON CONFLICT (owner_id, idempotency_key) DO NOTHING RETURNING id AS job_id \gset
INSERT INTO attempt (id, job_id, idempotency_key, request_digest, provider, state, request_key, remote_id,
                     output_digest, reason, reviewed_by, lease_owner, lease_expires_at, sent_at, version,
                     created_at, updated_at)
  VALUES (gen_random_uuid(), :job_id, NULL, NULL, 'fake-a', 'starting', 'attempt-' || gen_random_uuid(), NULL,
          NULL, NULL, NULL, NULL, NULL, NULL, 0, now(), now())
  RETURNING id AS attempt_id \gset
INSERT INTO outbox (attempt_id, job_id, created_at) VALUES (:attempt_id, :job_id, now()) RETURNING id AS outbox_id \gset
INSERT INTO job_event (job_id, attempt_id, at, kind, detail)
  VALUES (:job_id, NULL, now(), 'job.created', 'Idempotency-Key pgbench, owner pgbench');
INSERT INTO job_event (job_id, attempt_id, at, kind, detail)
  VALUES (:job_id, :attempt_id, now(), 'attempt.requested', 'provider fake-a');
SELECT * FROM job WHERE id = :job_id;
COMMIT;
SELECT * FROM attempt WHERE job_id = :job_id ORDER BY created_at;
SELECT * FROM usage_record WHERE attempt_id IN (:attempt_id);

-- api-service: OutboxRelay round (it batches up to 100 rows; one row here)
BEGIN;
SELECT id, attempt_id, job_id FROM outbox WHERE id = :outbox_id AND sent_at IS NULL FOR UPDATE SKIP LOCKED;
UPDATE outbox SET sent_at = now(), publish_attempts = publish_attempts + 1 WHERE id = ANY(ARRAY[CAST(:outbox_id AS bigint)]);
COMMIT;

-- worker-service: decide (claim)
BEGIN;
SELECT * FROM attempt WHERE id = :attempt_id;
SELECT * FROM job WHERE id = :job_id FOR UPDATE;
SELECT * FROM attempt WHERE id = :attempt_id;
SELECT * FROM generation WHERE attempt_id = :attempt_id;
UPDATE attempt SET lease_owner = 'pgbench', lease_expires_at = now() + interval '5 minutes', sent_at = now(),
                   updated_at = now(), version = version + 1
  WHERE id = :attempt_id AND state = 'starting' AND lease_owner IS NULL;
INSERT INTO job_event (job_id, attempt_id, at, kind, detail)
  VALUES (:job_id, :attempt_id, now(), 'attempt.claimed', 'by pgbench');
UPDATE job SET state = 'running', updated_at = now(), version = version + 1 WHERE id = :job_id AND version = 0;
COMMIT;

-- worker-service: providerRequest
BEGIN;
SELECT * FROM attempt WHERE id = :attempt_id;
SELECT * FROM job WHERE id = :job_id;
COMMIT;

-- worker-service: record (generation, usage)
BEGIN;
SELECT * FROM attempt WHERE id = :attempt_id;
SELECT * FROM job WHERE id = :job_id FOR UPDATE;
SELECT * FROM attempt WHERE id = :attempt_id;
INSERT INTO generation (attempt_id, patch, output_digest, created_at)
  VALUES (:attempt_id, convert_to(repeat('+ fixed line of the off-by-one patch\n', 8), 'UTF8'),
          'sha256:9f2c4e0b1d5d2b0d8f0b1e0f9a3c2d1e0f4c4e0b1d5d2b0d8f0b1e0f9a3c2d1e', now())
  ON CONFLICT (attempt_id) DO NOTHING;
INSERT INTO usage_record (attempt_id, owner_id, provider, prompt_tokens, completion_tokens, source, recorded_at)
  VALUES (:attempt_id, 'pgbench', 'fake-a', 12, 34, 'provider_reported', now()) ON CONFLICT (attempt_id) DO NOTHING;
INSERT INTO job_event (job_id, attempt_id, at, kind, detail)
  VALUES (:job_id, :attempt_id, now(), 'generation.stored', 'sha256:9f2c, remote id chatcmpl-pgbench');
INSERT INTO job_event (job_id, attempt_id, at, kind, detail)
  VALUES (:job_id, :attempt_id, now(), 'usage.recorded', 'provider_reported: 12 prompt + 34 completion tokens');
UPDATE attempt SET remote_id = 'chatcmpl-pgbench',
                   output_digest = 'sha256:9f2c4e0b1d5d2b0d8f0b1e0f9a3c2d1e0f4c4e0b1d5d2b0d8f0b1e0f9a3c2d1e',
                   updated_at = now(), version = version + 1
  WHERE id = :attempt_id AND version = 1;
COMMIT;

-- worker-service: elect
BEGIN;
SELECT * FROM attempt WHERE id = :attempt_id;
SELECT * FROM job WHERE id = :job_id FOR UPDATE;
SELECT * FROM attempt WHERE id = :attempt_id;
UPDATE job SET winning_attempt_id = :attempt_id, version = version + 1, updated_at = now()
  WHERE id = :job_id AND winning_attempt_id IS NULL AND version = 1 AND state IN ('accepted', 'running', 'needs_review');
UPDATE attempt SET state = 'succeeded', updated_at = now(), version = version + 1 WHERE id = :attempt_id AND version = 2;
INSERT INTO job_event (job_id, attempt_id, at, kind, detail)
  VALUES (:job_id, :attempt_id, now(), 'winner.elected', 'output sha256:9f2c');
COMMIT;

-- worker-service: apply, reserve the key
BEGIN;
SELECT * FROM attempt WHERE id = :attempt_id;
SELECT * FROM job WHERE id = :job_id;
SELECT * FROM generation WHERE attempt_id = :attempt_id;
INSERT INTO applied_patch (idem_key, job_id, attempt_id, scope, status, created_at)
  VALUES ('apply-' || CAST(:attempt_id AS text), :job_id, :attempt_id, 'store', 'pending', now())
  ON CONFLICT (idem_key) DO NOTHING RETURNING idem_key;
INSERT INTO job_event (job_id, attempt_id, at, kind, detail)
  VALUES (:job_id, :attempt_id, now(), 'apply.reserved', 'scope store');
COMMIT;

-- worker-service: apply done, job completed
BEGIN;
UPDATE applied_patch SET status = 'applied', target_ref = 'store-pgbench', applied_at = now()
  WHERE idem_key = 'apply-' || CAST(:attempt_id AS text) AND status = 'pending';
INSERT INTO job_event (job_id, attempt_id, at, kind, detail)
  VALUES (:job_id, :attempt_id, now(), 'apply.done', 'target store-pgbench');
SELECT * FROM job WHERE id = :job_id FOR UPDATE;
UPDATE job SET state = 'completed', updated_at = now(), version = version + 1 WHERE id = :job_id AND version = 2;
INSERT INTO job_event (job_id, attempt_id, at, kind, detail) VALUES (:job_id, :attempt_id, now(), 'job.completed', NULL);
COMMIT;
