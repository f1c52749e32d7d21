-- The kill switch for new fallback attempts (DESIGN.md rule 11). One row; disabling deletes nothing.
CREATE TABLE fallback_switch (
    singleton  boolean     PRIMARY KEY DEFAULT true,
    enabled    boolean     NOT NULL,
    reason     text,
    set_by     text,
    set_at     timestamptz NOT NULL,
    CONSTRAINT fallback_switch_is_singleton CHECK (singleton)
);

INSERT INTO fallback_switch (singleton, enabled, reason, set_by, set_at)
VALUES (true, true, 'initial state', 'migration', now());
