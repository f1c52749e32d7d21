-- Dead letters are rows (issue 30): the api's mover takes every message the broker dead-letters into
-- jobs.attempts.dead-letters (and, once, what the old jobs.attempts.dlq still held) and stores it
-- here, acknowledging it only after the commit. Operators list, count, filter, replay and discard
-- with SQL over these indexes; nothing reads the broker's queue by taking and returning any more.
CREATE TABLE dead_letter (
    id              bigserial   PRIMARY KEY,
    -- The AMQP message-id the publisher set (or, for a message without one, a digest of its body and
    -- its x-death history): a redelivered dead letter finds its row and makes no second one.
    message_key     text        NOT NULL,
    attempt_id      uuid,           -- null: not an attempt message (poison)
    job_id          uuid,
    owner_id        text,
    provider        text,
    -- The newest x-death entry's reason (rejected, delivery_limit, expired, maxlen) and queue.
    reason          text,
    death_queue     text,
    death_count     bigint      NOT NULL DEFAULT 0,
    first_death_at  timestamptz,
    last_death_at   timestamptz,
    delivery_count  bigint,
    -- When the mover stored it: the time the filters since/until mean.
    dead_lettered_at timestamptz NOT NULL,
    source_queue    text        NOT NULL,
    body            bytea       NOT NULL,
    headers         jsonb       NOT NULL DEFAULT '{}',
    -- What an operator did with it: null while pending; replayed, skipped (nothing left to do) or
    -- discarded, by whom and when. Set once, by a conditional update, never back to null.
    settlement      text,
    settled_at      timestamptz,
    settled_by      text,
    settle_reason   text,
    CONSTRAINT dead_letter_message_key_unique UNIQUE (message_key),
    CONSTRAINT dead_letter_settlement_is_legal
        CHECK (settlement IS NULL OR settlement IN ('replayed', 'skipped', 'discarded')),
    CONSTRAINT dead_letter_settled_together
        CHECK ((settlement IS NULL) = (settled_at IS NULL) AND (settlement IS NULL) = (settled_by IS NULL))
);

-- The listing, the count and the bulk actions walk pending rows in id order (keyset); a filter by
-- owner, provider or time has an index of its own.
CREATE INDEX dead_letter_pending ON dead_letter (id) WHERE settlement IS NULL;
CREATE INDEX dead_letter_pending_by_owner ON dead_letter (owner_id, id) WHERE settlement IS NULL;
CREATE INDEX dead_letter_pending_by_provider ON dead_letter (provider, id) WHERE settlement IS NULL;
CREATE INDEX dead_letter_by_time ON dead_letter (dead_lettered_at, id);

-- An attempt message the broker dead-lettered for its delivery limit while its attempt was still
-- open (issue 29 item 5: on a quorum queue a lost consumer connection counts as a delivery) goes
-- back to the work queue instead of becoming a row. Each return is one row here, keyed by the dead
-- letter's message so a redelivery counts once; past three returns the message is stored.
CREATE TABLE dead_letter_return (
    message_key     text        PRIMARY KEY,
    attempt_id      uuid        NOT NULL,
    returned_at     timestamptz NOT NULL
);

CREATE INDEX dead_letter_return_by_attempt ON dead_letter_return (attempt_id);
