-- Exactly-once apply. The key is derived from what is applied (job, normalized patch, scope),
-- so a second apply of the same result finds the row and counts as already done.
CREATE TABLE applied_patch (
    idem_key     text        PRIMARY KEY,
    job_id       uuid        NOT NULL REFERENCES job (id),
    attempt_id   uuid        NOT NULL REFERENCES attempt (id),
    scope        text        NOT NULL,
    status       text        NOT NULL,
    target_ref   text,
    created_at   timestamptz NOT NULL,
    applied_at   timestamptz,
    CONSTRAINT applied_patch_status_is_legal CHECK (status IN ('pending', 'applied')),
    CONSTRAINT applied_patch_applied_has_time CHECK (status <> 'applied' OR applied_at IS NOT NULL),
    -- One intention, one applied result.
    CONSTRAINT applied_patch_one_per_job UNIQUE (job_id)
);
