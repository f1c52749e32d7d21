-- bench/run's scratch schema for the least-SQL rows: the fewest columns, constraints and statements the
-- guarantees need, kept apart from the Flyway schema so these ceilings do not move when ours changes.
-- Made afresh each run. Only the constraints that carry a guarantee: one job per (owner, key), one
-- generation and one usage record per attempt, one apply key per job. No foreign keys, no timeline.
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS least CASCADE;
CREATE SCHEMA least;

CREATE TABLE least.job (
    id                  uuid        PRIMARY KEY,
    owner_id            text        NOT NULL,
    idempotency_key     text        NOT NULL,
    input_digest        text        NOT NULL,
    input               text        NOT NULL,
    provider            text        NOT NULL,
    state               text        NOT NULL,
    winning_attempt_id  uuid,
    version             bigint      NOT NULL DEFAULT 0,
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL,
    UNIQUE (owner_id, idempotency_key)
);

CREATE TABLE least.attempt (
    id                uuid        PRIMARY KEY,
    job_id            uuid        NOT NULL,
    provider          text        NOT NULL,
    state             text        NOT NULL,
    output_digest     text,
    lease_owner       text,
    lease_expires_at  timestamptz,
    version           bigint      NOT NULL DEFAULT 0,
    created_at        timestamptz NOT NULL
);

-- The relay deletes a row once the broker confirmed it: what is left is what is unsent.
CREATE TABLE least.outbox (
    id          bigserial   PRIMARY KEY,
    attempt_id  uuid        NOT NULL,
    job_id      uuid        NOT NULL,
    created_at  timestamptz NOT NULL
);

CREATE TABLE least.generation (
    attempt_id     uuid        PRIMARY KEY,
    patch          bytea       NOT NULL,
    output_digest  text        NOT NULL,
    created_at     timestamptz NOT NULL
);

CREATE TABLE least.usage_record (
    attempt_id         uuid        PRIMARY KEY,
    owner_id           text        NOT NULL,
    prompt_tokens      integer     NOT NULL,
    completion_tokens  integer     NOT NULL,
    recorded_at        timestamptz NOT NULL
);

CREATE TABLE least.applied_patch (
    idem_key    text        PRIMARY KEY,
    job_id      uuid        NOT NULL UNIQUE,
    attempt_id  uuid        NOT NULL,
    applied_at  timestamptz NOT NULL
);
