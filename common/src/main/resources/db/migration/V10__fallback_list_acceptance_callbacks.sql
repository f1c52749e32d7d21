-- Automatic fallback (DESIGN.md rule 12): the providers a job may move to, in order, when an
-- attempt fails definitively. Empty: no automatic fallback for this job.
ALTER TABLE job ADD COLUMN fallback_providers text[] NOT NULL DEFAULT '{}';

-- One run of the acceptance fixtures against one provider, requested by an operator and worked by
-- a worker. Automatic fallback only moves to a provider whose latest finished run passed recently.
CREATE TABLE provider_acceptance (
    id                uuid        PRIMARY KEY,
    provider          text        NOT NULL,
    state             text        NOT NULL,
    requested_by      text        NOT NULL,
    requested_at      timestamptz NOT NULL,
    -- The worker running it, and until when its claim keeps other workers off (a dead worker's
    -- run is taken over once the lease runs out).
    lease_owner       text,
    lease_expires_at  timestamptz,
    started_at        timestamptz,
    finished_at       timestamptz,
    tasks_total       integer     NOT NULL DEFAULT 0,
    tasks_done        integer     NOT NULL DEFAULT 0,
    tasks_passed      integer     NOT NULL DEFAULT 0,
    -- Per task: its name, whether it passed, why not, and the tokens the provider reported.
    results           jsonb       NOT NULL DEFAULT '[]',
    CONSTRAINT provider_acceptance_state_is_legal
        CHECK (state IN ('requested', 'running', 'passed', 'failed')),
    CONSTRAINT provider_acceptance_finished_has_time
        CHECK (state NOT IN ('passed', 'failed') OR finished_at IS NOT NULL)
);

CREATE INDEX provider_acceptance_latest ON provider_acceptance (provider, requested_at DESC);
CREATE INDEX provider_acceptance_to_run ON provider_acceptance (requested_at) WHERE state IN ('requested', 'running');

-- Results a provider pushed to POST /callbacks/{provider}, verified by HMAC before they are stored.
-- The reconciler reads them as it reads a provider lookup; the first callback for an attempt wins,
-- later copies are acknowledged and ignored.
CREATE TABLE provider_callback (
    attempt_id         uuid        PRIMARY KEY REFERENCES attempt (id),
    provider           text        NOT NULL,
    remote_id          text,
    output             bytea       NOT NULL,
    -- NULL when the provider reported no usage: the attempt is then quarantined, never applied.
    prompt_tokens      integer,
    completion_tokens  integer,
    signed_at          timestamptz NOT NULL,
    received_at        timestamptz NOT NULL,
    CONSTRAINT provider_callback_usage_whole
        CHECK ((prompt_tokens IS NULL) = (completion_tokens IS NULL))
);
