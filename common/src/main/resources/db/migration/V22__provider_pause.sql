-- A provider an operator paused: while its row exists no call of it starts; its attempts stay
-- starting and unclaimed, their deliveries acknowledged and never counted, and the resume announces
-- them again (docs/design.md, rule 19).
CREATE TABLE provider_pause (
    provider  text PRIMARY KEY,
    paused_by text NOT NULL,
    paused_at timestamptz NOT NULL,
    reason    text NOT NULL
);
