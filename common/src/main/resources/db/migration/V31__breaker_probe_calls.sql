-- A half-open breaker judges several probe calls, not one (docs/design.md rule 21).
--
-- One probe decided alone: a provider failing a third of its calls, as the chaos soak's does, failed
-- the probe a third of the time and held every call for another open time each time. CI's soak
-- (seed 42) ended its drain with 774 attempts held behind probes that kept failing.
--
-- provider_probe: the probe calls taken and not yet counted, one row per attempt. A claim takes one
-- under the provider_health row's lock while fewer than jobapi.provider-gate.probe-calls are taken
-- or counted; counting the call deletes the row. The gate's round deletes a probe whose attempt is
-- no longer in flight or that was taken longer than the probe timeout ago (its worker died), so a
-- held attempt probes in its place.
--
-- probe_calls, probe_faults: the probe calls counted since the breaker went half open. The faults
-- reaching the fault share of all the probe calls opens it again; the successes making that
-- impossible close it.
--
-- probe_attempt_id and probe_claimed_at (V24) are no longer written. Workers of the release before
-- this one still use them during a rolling deploy; a later release drops them.
CREATE TABLE provider_probe (
    attempt_id uuid        PRIMARY KEY,
    provider   text        NOT NULL REFERENCES provider_health (provider),
    claimed_at timestamptz NOT NULL
);

CREATE INDEX provider_probe_provider ON provider_probe (provider);

ALTER TABLE provider_health
    ADD COLUMN probe_calls  integer NOT NULL DEFAULT 0 CHECK (probe_calls >= 0),
    ADD COLUMN probe_faults integer NOT NULL DEFAULT 0 CHECK (probe_faults >= 0 AND probe_faults <= probe_calls);

INSERT INTO provider_probe (attempt_id, provider, claimed_at)
SELECT probe_attempt_id, provider, probe_claimed_at
FROM provider_health
WHERE state = 'half_open' AND probe_attempt_id IS NOT NULL AND probe_claimed_at IS NOT NULL;
