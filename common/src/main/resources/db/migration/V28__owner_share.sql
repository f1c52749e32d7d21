-- A fair share per owner (issue 32, docs/design.md "Fair share"), set by operators through the api
-- (audited): the owner's weight in the relay's turns (rows per turn), and a cap on the owner's calls
-- in flight at once, checked at the claim (docs/design.md, rule 21). An owner without a row has
-- weight 1 and the deployment's default cap, if any.
CREATE TABLE owner_share (
    owner_id text PRIMARY KEY,
    weight int NOT NULL DEFAULT 1 CHECK (weight BETWEEN 1 AND 100),
    max_in_flight int CHECK (max_in_flight > 0),
    set_by text NOT NULL,
    reason text NOT NULL,
    updated_at timestamptz NOT NULL
);

-- The calls in flight: claimed attempts not yet recorded. The claim counts a provider's or an
-- owner's here, a few rows, never the backlog of unclaimed attempts.
CREATE INDEX attempt_in_flight ON attempt (provider) WHERE state = 'starting' AND lease_owner IS NOT NULL;
