-- Rows written in the same transaction as the attempt they announce; a relay publishes them
-- with publisher confirms and marks them sent only after the broker confirmed.
CREATE TABLE outbox (
    id               bigserial   PRIMARY KEY,
    attempt_id       uuid        NOT NULL REFERENCES attempt (id),
    job_id           uuid        NOT NULL REFERENCES job (id),
    created_at       timestamptz NOT NULL,
    sent_at          timestamptz,
    publish_attempts integer     NOT NULL DEFAULT 0,
    last_error       text
);

-- The relay's work list: unsent rows in commit order.
CREATE INDEX outbox_unsent ON outbox (id) WHERE sent_at IS NULL;
