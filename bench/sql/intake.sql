-- pgbench: what api-service sends PostgreSQL for one fresh POST /jobs (JobIntake.submit, OutboxWriter,
-- JobEvents, then JobViews reading the answer), statement for statement. Run with -M prepared, as JDBC does.
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
INSERT INTO outbox (attempt_id, job_id, created_at) VALUES (:attempt_id, :job_id, now());
INSERT INTO job_event (job_id, attempt_id, at, kind, detail)
  VALUES (:job_id, NULL, now(), 'job.created', 'Idempotency-Key pgbench, owner pgbench');
INSERT INTO job_event (job_id, attempt_id, at, kind, detail)
  VALUES (:job_id, :attempt_id, now(), 'attempt.requested', 'provider fake-a');
SELECT * FROM job WHERE id = :job_id;
COMMIT;
-- JobViews.of runs after the commit, outside the transaction.
SELECT * FROM attempt WHERE job_id = :job_id ORDER BY created_at;
SELECT * FROM usage_record WHERE attempt_id IN (:attempt_id);
