-- Webhooks (issue 34, docs/design.md "Push: webhooks"): an owner's endpoints, and one delivery per
-- endpoint and event it wants, written by a trigger in the transaction that writes the event. So a
-- delivery exists exactly when its event committed, whichever process or path wrote the event, and
-- the api's dispatcher only ever sends what is already in this outbox.
CREATE TABLE webhook_endpoint (
    id uuid PRIMARY KEY,
    owner_id text NOT NULL,
    url text NOT NULL,
    -- The event kinds wanted (job_event.kind wire names).
    event_types text[] NOT NULL,
    description text,
    -- "whsec_" and the base64 of the key (Standard Webhooks' serialization).
    secret text NOT NULL,
    -- After a rotation the old secret signs too, until previous_secret_until.
    previous_secret text,
    previous_secret_until timestamptz,
    created_at timestamptz NOT NULL,
    -- Disabled because it answered 410 Gone, or deleted: nothing more is sent to it. A row is never
    -- removed: an event's transaction may be inserting a delivery for it (a foreign key would fail
    -- that transaction); a disabled endpoint's delivery log stays readable.
    disabled_at timestamptz,
    disabled_reason text,
    deleted_at timestamptz,
    CHECK ((previous_secret IS NULL) = (previous_secret_until IS NULL)),
    CHECK ((disabled_at IS NULL) = (disabled_reason IS NULL)),
    CHECK (deleted_at IS NULL OR disabled_at IS NOT NULL)
);

-- An owner registers a URL once: a registration retried after a lost answer is refused, not doubled.
CREATE UNIQUE INDEX webhook_endpoint_url ON webhook_endpoint (owner_id, url) WHERE disabled_at IS NULL;

CREATE TABLE webhook_delivery (
    id bigserial PRIMARY KEY,
    -- The Standard Webhooks message id: the same on every try of this delivery.
    webhook_id text NOT NULL UNIQUE DEFAULT 'msg_' || replace(gen_random_uuid()::text, '-', ''),
    endpoint_id uuid NOT NULL REFERENCES webhook_endpoint (id),
    -- The event delivered; null for a test delivery (type webhook.test).
    event_id bigint REFERENCES job_event (id),
    job_id uuid REFERENCES job (id),
    type text NOT NULL,
    state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts int NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    -- Retries stop at retry_from plus the deployment's give-up-after; a manual retry moves it.
    retry_from timestamptz NOT NULL DEFAULT now(),
    -- When the dispatcher takes it next: due now, after a backoff, or past a try's lease.
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_attempt_at timestamptz,
    last_status int,
    last_error text,
    delivered_at timestamptz,
    UNIQUE (endpoint_id, event_id),
    CHECK ((state = 'delivered') = (delivered_at IS NOT NULL))
);

CREATE INDEX webhook_delivery_due ON webhook_delivery (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_delivery_log ON webhook_delivery (endpoint_id, id);

-- One statement-level trigger per INSERT into job_event (the timeline writes a transaction's events
-- in one batch): the events of owners with no endpoint cost one probe of webhook_endpoint_wanted.
CREATE INDEX webhook_endpoint_wanted ON webhook_endpoint (owner_id) WHERE disabled_at IS NULL;

CREATE FUNCTION webhook_deliveries_of_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webhook_delivery (endpoint_id, event_id, job_id, type)
    SELECT w.id, e.id, e.job_id, e.kind
    FROM written e
    JOIN webhook_endpoint w ON w.owner_id = e.owner_id AND w.disabled_at IS NULL AND e.kind = ANY (w.event_types)
    ORDER BY e.id, w.id;
    RETURN NULL;
END
$$;

CREATE TRIGGER job_event_webhooks AFTER INSERT ON job_event REFERENCING NEW TABLE AS written
    FOR EACH STATEMENT EXECUTE FUNCTION webhook_deliveries_of_events();
