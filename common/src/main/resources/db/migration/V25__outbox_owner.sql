-- A fair share of the workers per owner (issue 32, docs/design.md "Fair share"): the relay keeps
-- only a few messages ready in the work queue and publishes the rest of the outbox owner by owner,
-- in turn. Each row carries its job's owner, set by a trigger so that every writer of the outbox
-- (intake, attempt requests, automatic fallback, the sweeps, the health gate, dead-letter replays)
-- is covered without naming it.
ALTER TABLE outbox ADD COLUMN owner_id text;
UPDATE outbox o SET owner_id = j.owner_id FROM job j WHERE j.id = o.job_id;
ALTER TABLE outbox ALTER COLUMN owner_id SET NOT NULL;

CREATE FUNCTION outbox_owner() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT owner_id INTO STRICT NEW.owner_id FROM job WHERE id = NEW.job_id;
    RETURN NEW;
END
$$;

CREATE TRIGGER outbox_owner BEFORE INSERT ON outbox FOR EACH ROW EXECUTE FUNCTION outbox_owner();

-- The relay's turns: the owners with unsent rows (a skip scan), and each one's oldest rows.
CREATE INDEX outbox_unsent_by_owner ON outbox (owner_id, id) WHERE sent_at IS NULL;
