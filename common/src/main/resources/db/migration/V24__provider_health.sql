-- A provider's health gate, shared by every worker (issue 32, docs/design.md rule 21).
--
-- The circuit breaker: calls and provider faults are counted in a window; past the failure share
-- over the minimum of calls the breaker opens until retry_at, then one probe call (half open)
-- closes it on success or opens it again on failure. A rate limit the provider announced (a
-- retry-after, a remaining count of 0) holds its calls until limited_until. While the gate is
-- shut, attempts of the provider stay starting and unclaimed, their messages acknowledged
-- uncounted; when it opens again they are announced again through the outbox.
CREATE TABLE provider_health (
    provider          text        PRIMARY KEY,
    state             text        NOT NULL DEFAULT 'closed' CHECK (state IN ('closed', 'open', 'half_open')),
    window_started_at timestamptz NOT NULL,
    window_calls      integer     NOT NULL DEFAULT 0 CHECK (window_calls >= 0),
    window_faults     integer     NOT NULL DEFAULT 0 CHECK (window_faults >= 0),
    opened_at         timestamptz,
    retry_at          timestamptz,
    -- The half-open probe: the one attempt allowed to call, and when it was claimed.
    probe_attempt_id  uuid,
    probe_claimed_at  timestamptz,
    last_fault        text,
    limited_until     timestamptz,
    limit_reason      text,
    updated_at        timestamptz NOT NULL,
    CHECK ((state = 'closed') = (retry_at IS NULL))
);

-- A claimed attempt handed back unsent (the provider declined it with a rate limit to wait out)
-- gives its money reservation back, as a failed one without usage does: the provider charged
-- nothing. Its next claim reserves again.
CREATE TRIGGER attempt_unclaimed_releases_spend
    BEFORE UPDATE ON attempt
    FOR EACH ROW
    WHEN (NEW.state = 'starting' AND OLD.lease_owner IS NOT NULL AND NEW.lease_owner IS NULL
          AND OLD.reservation_open)
    EXECUTE FUNCTION spend_release_failed();
