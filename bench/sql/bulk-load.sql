-- Adds completed jobs number :from to :to, each as the pipeline leaves it: the job with its winning attempt,
-- usage, sent outbox row and two timeline events. Every CHECK constraint is enforced; foreign keys hold by
-- construction (ids are derived from the job number), so their per-row triggers are skipped
-- (session_replication_role = replica, which needs a superuser) to load a million jobs in seconds, not minutes.
-- Owners bulk-0 .. bulk-99; created_at one second apart from 2025-01-01, older than any job the bench posts.
\set ON_ERROR_STOP on
SET session_replication_role = replica;
BEGIN;
INSERT INTO job (id, owner_id, idempotency_key, input_digest, input, provider, state, winning_attempt_id, version,
                 created_at, updated_at)
SELECT md5('job-' || g)::uuid, 'bulk-' || (g % 100), 'bulk-' || g, 'sha256:' || md5('input-' || g),
       '{"baseRef":"main","prompt":"bulk job ' || g || '","repository":"demo"}', 'fake-a', 'completed',
       md5('attempt-' || g)::uuid, 3, t, t
FROM generate_series(:from, :to) g, LATERAL (SELECT timestamptz '2025-01-01 00:00:00+00' + make_interval(secs => g) AS t) c;
INSERT INTO attempt (id, job_id, provider, state, request_key, remote_id, output_digest, lease_owner,
                     lease_expires_at, sent_at, version, created_at, updated_at)
SELECT md5('attempt-' || g)::uuid, md5('job-' || g)::uuid, 'fake-a', 'succeeded',
       'attempt-' || md5('attempt-' || g)::uuid, 'chatcmpl-bulk-' || g, 'sha256:' || md5('output-' || g),
       'bulk', t + interval '5 minutes', t, 3, t, t
FROM generate_series(:from, :to) g, LATERAL (SELECT timestamptz '2025-01-01 00:00:00+00' + make_interval(secs => g) AS t) c;
INSERT INTO usage_record (attempt_id, owner_id, provider, prompt_tokens, completion_tokens, source, recorded_at)
SELECT md5('attempt-' || g)::uuid, 'bulk-' || (g % 100), 'fake-a', 12, 34, 'provider_reported',
       timestamptz '2025-01-01 00:00:00+00' + make_interval(secs => g)
FROM generate_series(:from, :to) g;
-- The owner by hand: with the triggers skipped, owner_of_the_job (V25, V26) does not set it.
INSERT INTO outbox (attempt_id, job_id, owner_id, created_at, sent_at, publish_attempts)
SELECT md5('attempt-' || g)::uuid, md5('job-' || g)::uuid, 'bulk-' || (g % 100), t, t, 1
FROM generate_series(:from, :to) g, LATERAL (SELECT timestamptz '2025-01-01 00:00:00+00' + make_interval(secs => g) AS t) c;
INSERT INTO job_event (job_id, owner_id, attempt_id, at, kind, detail)
SELECT md5('job-' || g)::uuid, 'bulk-' || (g % 100), e.attempt_id, timestamptz '2025-01-01 00:00:00+00' + make_interval(secs => g), e.kind, NULL
FROM generate_series(:from, :to) g,
     LATERAL (VALUES (NULL::uuid, 'job.created'), (md5('attempt-' || g)::uuid, 'job.completed')) e(attempt_id, kind);
COMMIT;
SET session_replication_role = DEFAULT;
VACUUM ANALYZE job, attempt, usage_record, outbox, job_event;
