-- An attempt is one try of a job at one provider. Attempts are state transitions of the job,
-- never new jobs; the first is made by POST /jobs, later ones by POST /jobs/{id}/attempts.
CREATE TABLE attempt (
    id                uuid        PRIMARY KEY,
    job_id            uuid        NOT NULL REFERENCES job (id),
    -- The Idempotency-Key of POST /jobs/{id}/attempts, scoped to the job; NULL for the first attempt.
    idempotency_key   text,
    request_digest    text,
    provider          text        NOT NULL,
    state             text        NOT NULL,
    -- Sent to the provider with every transport send of this attempt, so a resend is recognisable.
    request_key       text        NOT NULL,
    remote_id         text,
    output_digest     text,
    reason            text,
    reviewed_by       text,
    -- Missing provider usage fails closed: the attempt is held here until an operator reconciles it.
    quarantined       boolean     NOT NULL DEFAULT false,
    lease_owner       text,
    lease_expires_at  timestamptz,
    sent_at           timestamptz,
    version           bigint      NOT NULL DEFAULT 0,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL,
    CONSTRAINT attempt_state_is_legal
        CHECK (state IN ('starting', 'succeeded', 'failed', 'unknown', 'superseded')),
    CONSTRAINT attempt_succeeded_has_output
        CHECK (state <> 'succeeded' OR output_digest IS NOT NULL),
    CONSTRAINT attempt_job_idempotency_key_unique UNIQUE (job_id, idempotency_key)
);

CREATE INDEX attempt_by_job ON attempt (job_id, created_at);
-- The open attempts (starting or unknown) are what the review-required guard and the reconciler read.
CREATE INDEX attempt_open ON attempt (state) WHERE state IN ('starting', 'unknown');

ALTER TABLE job
    ADD CONSTRAINT job_winning_attempt_fk FOREIGN KEY (winning_attempt_id) REFERENCES attempt (id);
