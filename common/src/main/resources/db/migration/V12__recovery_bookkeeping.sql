-- Nothing stranded: what the workers' recovery sweep and the consumer keep per row.

-- Deliveries of this attempt's message that failed in the worker (an exception, not a crash or a
-- closed connection). The consumer dead-letters the message at the limit; returns caused by a
-- restart or a lost connection never count here.
ALTER TABLE attempt ADD COLUMN failed_deliveries integer NOT NULL DEFAULT 0;

-- Stalled-apply recovery: how many resumes failed and when the next may run (exponential
-- backoff), so the least recently tried job goes first and no job blocks the others.
ALTER TABLE job ADD COLUMN apply_failures integer NOT NULL DEFAULT 0;
ALTER TABLE job ADD COLUMN apply_retry_at timestamptz;

-- The sweep's work lists: claimed attempts whose lease may have run out, and open jobs with a winner.
CREATE INDEX attempt_claimed_lease ON attempt (lease_expires_at) WHERE state = 'starting' AND lease_owner IS NOT NULL;
CREATE INDEX job_open_with_winner ON job (apply_retry_at NULLS FIRST, updated_at)
    WHERE winning_attempt_id IS NOT NULL AND state IN ('accepted', 'running', 'needs_review');
