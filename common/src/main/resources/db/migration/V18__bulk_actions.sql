-- Bulk actions by filter (issue 30): an operator's dry run counts what a filter matches and signs
-- that count and a fingerprint of the matched set into a token; the execution freezes the set as
-- items of a bulk_action row, checks it against the token (409 when it changed) and works through
-- the items in batches, each item's change, its outcome here and its audit record in one
-- transaction. A crash loses nothing: the next round continues with the items still without outcome.
CREATE TABLE bulk_action (
    id              bigserial   PRIMARY KEY,
    -- dlq-replay, dlq-discard: dead letters; job-cancel, job-retry: jobs; quarantine-fail: attempts.
    action          text        NOT NULL,
    -- The filter as the dry run signed it (canonical JSON: owner, provider, state, reason, since, until).
    filter          jsonb       NOT NULL,
    reason          text,
    requested_by    text        NOT NULL,
    total           integer     NOT NULL,
    created_at      timestamptz NOT NULL,
    -- Null while items without an outcome remain (running: the api's bulk runner, or the request
    -- itself for a small set, works on them); set once every item has its outcome (done, terminal).
    finished_at     timestamptz,
    CONSTRAINT bulk_action_action_is_legal
        CHECK (action IN ('dlq-replay', 'dlq-discard', 'job-cancel', 'job-retry', 'quarantine-fail')),
    CONSTRAINT bulk_action_finished_after_created CHECK (finished_at IS NULL OR finished_at >= created_at)
);

CREATE INDEX bulk_action_running ON bulk_action (id) WHERE finished_at IS NULL;

-- The frozen set: one row per dead letter, job or attempt the execution matched, in the dry run's
-- order. outcome null: not processed yet; done: the action made its change; skipped: nothing left to
-- do (the ledger says the attempt is settled, or another action settled the dead letter first);
-- refused: the single action's own check refused it (the state machine, the kill switch), detail says why.
CREATE TABLE bulk_action_item (
    bulk_action_id  bigint      NOT NULL REFERENCES bulk_action (id),
    seq             integer     NOT NULL,
    target          text        NOT NULL,
    outcome         text,
    detail          text,
    PRIMARY KEY (bulk_action_id, seq),
    CONSTRAINT bulk_action_item_outcome_is_legal
        CHECK (outcome IS NULL OR outcome IN ('done', 'skipped', 'refused'))
);

CREATE INDEX bulk_action_item_pending ON bulk_action_item (bulk_action_id, seq) WHERE outcome IS NULL;

-- The key the dry-run tokens are signed with: one row, made by the first replica that needs it, so
-- every replica verifies what any other signed.
CREATE TABLE bulk_token_key (
    id              integer     PRIMARY KEY,
    secret          bytea       NOT NULL,
    CONSTRAINT bulk_token_key_single CHECK (id = 1)
);
