-- Money budgets reserved before the send (issue 32, docs/design.md rule 20).
--
-- Prices per provider and model, versioned: a change is a new row, effective from its time. An
-- attempt keeps the price it was claimed at (attempt.price_id), so a change never rewrites a past
-- cost. In US dollars per million tokens.
CREATE TABLE provider_price (
    id                   bigserial     PRIMARY KEY,
    provider             text          NOT NULL,
    model                text          NOT NULL,
    input_usd_per_mtok   numeric(14,6) NOT NULL CHECK (input_usd_per_mtok >= 0),
    output_usd_per_mtok  numeric(14,6) NOT NULL CHECK (output_usd_per_mtok >= 0),
    effective_from       timestamptz   NOT NULL,
    set_by               text          NOT NULL,
    reason               text          NOT NULL
);

CREATE INDEX provider_price_newest ON provider_price (provider, model, effective_from DESC, id DESC);

-- An owner's budget for a period, set by an operator (audited); the properties give a default for
-- owners without one.
CREATE TABLE spend_budget (
    owner_id      text          NOT NULL,
    period        text          NOT NULL CHECK (period IN ('day', 'month')),
    limit_usd     numeric(14,6) NOT NULL CHECK (limit_usd >= 0),
    soft_percent  smallint      NOT NULL CHECK (soft_percent BETWEEN 1 AND 100),
    set_by        text          NOT NULL,
    set_at        timestamptz   NOT NULL,
    reason        text          NOT NULL,
    PRIMARY KEY (owner_id, period)
);

-- What an owner has spent and holds reserved in one period (a UTC day, a UTC month starting on
-- starts_on), for owners with a budget. A reservation is a conditional UPDATE of this row that only
-- succeeds while spent + reserved + the new reservation fit the budget: concurrent claims queue on
-- the row, and each sees the others' reservations.
CREATE TABLE spend_window (
    owner_id      text          NOT NULL,
    period        text          NOT NULL CHECK (period IN ('day', 'month')),
    starts_on     date          NOT NULL,
    spent_usd     numeric(18,6) NOT NULL DEFAULT 0,
    reserved_usd  numeric(18,6) NOT NULL DEFAULT 0 CHECK (reserved_usd >= 0),
    PRIMARY KEY (owner_id, period, starts_on)
);

-- price_id: the price in force when the attempt was claimed (null: none was set). reserved_usd: the
-- most the call can cost (its prompt's bytes, a bound on its tokens, and max_tokens, at that price),
-- held in the windows of the periods in reserved_in (of the claim's day and month) while
-- reservation_open. cost_usd: the cost of
-- the usage the provider reported. None of them is mapped by the ORM: only the claim and the
-- triggers below write them.
ALTER TABLE attempt
    ADD COLUMN price_id          bigint REFERENCES provider_price (id),
    ADD COLUMN reserved_usd      numeric(18,6),
    ADD COLUMN reserved_in       text[],
    ADD COLUMN reservation_open  boolean NOT NULL DEFAULT false,
    ADD COLUMN cost_usd          numeric(18,6);

-- The windows an attempt's spend belongs to: those of the UTC day and month it was claimed in.
CREATE FUNCTION spend_window_matches(w spend_window, owner text, claimed timestamptz) RETURNS boolean
    LANGUAGE sql STABLE AS $$
    SELECT w.owner_id = owner
       AND ((w.period = 'day' AND w.starts_on = (claimed AT TIME ZONE 'UTC')::date)
         OR (w.period = 'month' AND w.starts_on = date_trunc('month', claimed AT TIME ZONE 'UTC')::date))
$$;

-- Settles an attempt's spend when its provider-reported usage arrives, by whichever path writes it
-- (the record step, the reconciler, an operator's resolution): its cost at its price is recorded,
-- added to its windows' spend, and its reservation, if still open, released from them.
CREATE FUNCTION spend_settle() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    claimed  record;
    cost     numeric(18,6);
BEGIN
    IF NEW.source <> 'provider_reported' OR (TG_OP = 'UPDATE' AND OLD.source = 'provider_reported') THEN
        RETURN NEW;
    END IF;
    SELECT a.sent_at, a.reserved_usd, a.reserved_in, a.reservation_open, p.input_usd_per_mtok, p.output_usd_per_mtok
      INTO claimed
      FROM attempt a JOIN provider_price p ON p.id = a.price_id
     WHERE a.id = NEW.attempt_id;
    IF NOT FOUND THEN
        RETURN NEW; -- no price when it was claimed: its cost in money is not known
    END IF;
    cost := round((NEW.prompt_tokens * claimed.input_usd_per_mtok
                   + NEW.completion_tokens * claimed.output_usd_per_mtok) / 1000000, 6);
    UPDATE attempt SET cost_usd = cost, reservation_open = false WHERE id = NEW.attempt_id;
    UPDATE spend_window w
       SET spent_usd = w.spent_usd + cost,
           reserved_usd = w.reserved_usd
               - CASE WHEN claimed.reservation_open AND w.period = ANY (claimed.reserved_in)
                      THEN claimed.reserved_usd ELSE 0 END
     WHERE spend_window_matches(w, NEW.owner_id, claimed.sent_at);
    RETURN NEW;
END;
$$;

CREATE TRIGGER usage_record_settles_spend
    AFTER INSERT OR UPDATE OF source ON usage_record
    FOR EACH ROW EXECUTE FUNCTION spend_settle();

-- Releases the reservation of an attempt that failed with no usage recorded: the provider charged
-- nothing we know of. One whose usage is unknown keeps its reservation until it is reconciled; a
-- superseded one keeps it too, since its call may still be running.
CREATE FUNCTION spend_release_failed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM usage_record WHERE attempt_id = NEW.id) THEN
        UPDATE spend_window w
           SET reserved_usd = w.reserved_usd - NEW.reserved_usd
          FROM job j
         WHERE j.id = NEW.job_id AND spend_window_matches(w, j.owner_id, NEW.sent_at)
           AND w.period = ANY (NEW.reserved_in);
        NEW.reservation_open := false;
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER attempt_failed_releases_spend
    BEFORE UPDATE ON attempt
    FOR EACH ROW
    WHEN (NEW.state = 'failed' AND OLD.state <> 'failed' AND OLD.reservation_open)
    EXECUTE FUNCTION spend_release_failed();
