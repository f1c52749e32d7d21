-- A provider's configured limits and its calls this minute (issue 32, docs/design.md rule 21).
--
-- max_in_flight, requests_per_minute, tokens_per_minute: the limits the newest worker to start was
-- configured with (jobapi.provider.<name>.*), written at its start so /admin/providers can show
-- them; null is no limit. Each worker enforces its own configuration.
--
-- rate_minute, minute_requests, minute_tokens: the calls claimed in the current UTC minute and the
-- tokens they may use at most (prompt bound plus max_tokens), counted only for a provider with a
-- per-minute limit. A claim counts itself by a conditional upsert that succeeds only while the call
-- fits both limits; one that does not fit holds the provider's calls until the next minute
-- (limited_until), as a limit the provider announced does.
ALTER TABLE provider_health
    ADD COLUMN max_in_flight        integer CHECK (max_in_flight >= 1),
    ADD COLUMN requests_per_minute  integer CHECK (requests_per_minute >= 1),
    ADD COLUMN tokens_per_minute    integer CHECK (tokens_per_minute >= 1),
    ADD COLUMN rate_minute          timestamptz,
    ADD COLUMN minute_requests      integer NOT NULL DEFAULT 0 CHECK (minute_requests >= 0),
    ADD COLUMN minute_tokens        bigint  NOT NULL DEFAULT 0 CHECK (minute_tokens >= 0);
