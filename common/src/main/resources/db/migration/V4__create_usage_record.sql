-- What each provider reported it spent, one record per attempt that reached a provider.
-- 'unknown' is recorded, never guessed: an attempt with unknown usage is quarantined.
CREATE TABLE usage_record (
    attempt_id         uuid        PRIMARY KEY REFERENCES attempt (id),
    owner_id           text        NOT NULL,
    provider           text        NOT NULL,
    prompt_tokens      integer,
    completion_tokens  integer,
    source             text        NOT NULL,
    recorded_at        timestamptz NOT NULL,
    CONSTRAINT usage_record_source_is_legal CHECK (source IN ('provider_reported', 'unknown')),
    CONSTRAINT usage_record_reported_has_counts
        CHECK (source <> 'provider_reported'
               OR (prompt_tokens IS NOT NULL AND completion_tokens IS NOT NULL
                   AND prompt_tokens >= 0 AND completion_tokens >= 0))
);

CREATE INDEX usage_record_by_owner ON usage_record (owner_id, recorded_at);
