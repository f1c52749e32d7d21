-- A job is one user intention. It is created once per (owner, idempotency key) and carries
-- at most one winning attempt; every later click, retry or redelivery refers to it.
CREATE TABLE job (
    id                  uuid        PRIMARY KEY,
    owner_id            text        NOT NULL,
    idempotency_key     text        NOT NULL,
    input_digest        text        NOT NULL,
    input               text        NOT NULL,
    provider            text        NOT NULL,
    state               text        NOT NULL,
    winning_attempt_id  uuid,
    review_reason       text,
    version             bigint      NOT NULL DEFAULT 0,
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL,
    CONSTRAINT job_state_is_legal
        CHECK (state IN ('accepted', 'running', 'needs_review', 'completed', 'cancelled')),
    CONSTRAINT job_completed_has_winner
        CHECK (state <> 'completed' OR winning_attempt_id IS NOT NULL),
    CONSTRAINT job_idempotency_key_is_printable
        CHECK (char_length(idempotency_key) BETWEEN 1 AND 255),
    CONSTRAINT job_owner_idempotency_key_unique UNIQUE (owner_id, idempotency_key)
);

-- GET /jobs: the caller's jobs, newest first, keyset-paginated on (created_at, id).
CREATE INDEX job_owner_newest_first ON job (owner_id, created_at DESC, id DESC);
