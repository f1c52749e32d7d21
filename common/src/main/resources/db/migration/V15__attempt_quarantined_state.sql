-- Quarantine becomes a state of the attempt instead of a flag beside it (AttemptState.QUARANTINED):
-- a held attempt was 'unknown' with quarantined = true; it is now 'quarantined', and only the
-- transition table moves it in and out. The flag on attempts in any other state no longer said
-- anything (an operator's release or fail had moved them on) and is dropped; the timeline's
-- attempt.quarantined events still say which attempts were ever held.
ALTER TABLE attempt DROP CONSTRAINT attempt_state_is_legal;
UPDATE attempt SET state = 'quarantined' WHERE quarantined AND state = 'unknown';
ALTER TABLE attempt ADD CONSTRAINT attempt_state_is_legal
    CHECK (state IN ('starting', 'succeeded', 'failed', 'unknown', 'superseded', 'quarantined'));
ALTER TABLE attempt DROP COLUMN quarantined;

-- The open attempts (starting, unknown, quarantined) are what the review-required guard reads.
DROP INDEX attempt_open;
CREATE INDEX attempt_open ON attempt (state) WHERE state IN ('starting', 'unknown', 'quarantined');
