-- Money budgets optionally per provider (issue 32, docs/design.md rule 20).
--
-- An owner's budget holds the calls to every provider (provider '', every budget before this
-- migration) or those to one provider. A claim reserves in each budget that applies to its call:
-- the owner's budgets for every provider and those for the attempt's provider. Per-provider budgets
-- are set through this release's api; set none before every worker runs it (an older worker's claim
-- would take a provider's budget for one of every provider).
ALTER TABLE spend_budget ADD COLUMN provider text NOT NULL DEFAULT '';
ALTER TABLE spend_budget DROP CONSTRAINT spend_budget_pkey, ADD PRIMARY KEY (owner_id, period, provider);

ALTER TABLE spend_window ADD COLUMN provider text NOT NULL DEFAULT '';
ALTER TABLE spend_window DROP CONSTRAINT spend_window_pkey, ADD PRIMARY KEY (owner_id, period, starts_on, provider);

-- The name attempt.reserved_in gives a window: its period ('day', 'month') for a budget of every
-- provider, the period and the provider ('day:openai') for one provider's. The names attempts
-- recorded before this migration are periods: the windows of every provider they were.
CREATE FUNCTION spend_window_name(w spend_window) RETURNS text
    LANGUAGE sql IMMUTABLE AS $$
    SELECT w.period || CASE WHEN w.provider = '' THEN '' ELSE ':' || w.provider END
$$;

-- The windows a call's spend belongs to: those of the UTC day and month it was claimed in, for
-- every provider and for the call's provider.
DROP FUNCTION spend_window_matches(spend_window, text, timestamptz);
CREATE FUNCTION spend_window_matches(w spend_window, owner text, call_provider text, claimed timestamptz)
    RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT w.owner_id = owner
       AND w.provider IN ('', call_provider)
       AND ((w.period = 'day' AND w.starts_on = (claimed AT TIME ZONE 'UTC')::date)
         OR (w.period = 'month' AND w.starts_on = date_trunc('month', claimed AT TIME ZONE 'UTC')::date))
$$;

-- As in V23, for every window of the call. The windows are locked first, in the order a claim
-- reserves in them (SpendBudgets: day before month, every provider's before the provider's), so a
-- settlement and a claim never each hold a window the other waits for.
CREATE OR REPLACE FUNCTION spend_settle() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    claimed  record;
    cost     numeric(18,6);
BEGIN
    IF NEW.source <> 'provider_reported' OR (TG_OP = 'UPDATE' AND OLD.source = 'provider_reported') THEN
        RETURN NEW;
    END IF;
    SELECT a.sent_at, a.provider, a.reserved_usd, a.reserved_in, a.reservation_open,
           p.input_usd_per_mtok, p.output_usd_per_mtok
      INTO claimed
      FROM attempt a JOIN provider_price p ON p.id = a.price_id
     WHERE a.id = NEW.attempt_id;
    IF NOT FOUND THEN
        RETURN NEW; -- no price when it was claimed: its cost in money is not known
    END IF;
    cost := round((NEW.prompt_tokens * claimed.input_usd_per_mtok
                   + NEW.completion_tokens * claimed.output_usd_per_mtok) / 1000000, 6);
    UPDATE attempt SET cost_usd = cost, reservation_open = false WHERE id = NEW.attempt_id;
    PERFORM 1 FROM spend_window w
      WHERE spend_window_matches(w, NEW.owner_id, claimed.provider, claimed.sent_at)
      ORDER BY w.period, w.provider FOR UPDATE;
    UPDATE spend_window w
       SET spent_usd = w.spent_usd + cost,
           reserved_usd = w.reserved_usd
               - CASE WHEN claimed.reservation_open AND spend_window_name(w) = ANY (claimed.reserved_in)
                      THEN claimed.reserved_usd ELSE 0 END
     WHERE spend_window_matches(w, NEW.owner_id, claimed.provider, claimed.sent_at);
    RETURN NEW;
END;
$$;

-- As in V23: exactly the windows the attempt reserved in, locked in the claims' order.
CREATE OR REPLACE FUNCTION spend_release_failed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    owner  text;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM usage_record WHERE attempt_id = NEW.id) THEN
        SELECT j.owner_id INTO owner FROM job j WHERE j.id = NEW.job_id;
        PERFORM 1 FROM spend_window w
          WHERE spend_window_matches(w, owner, NEW.provider, NEW.sent_at)
            AND spend_window_name(w) = ANY (NEW.reserved_in)
          ORDER BY w.period, w.provider FOR UPDATE;
        UPDATE spend_window w
           SET reserved_usd = w.reserved_usd - NEW.reserved_usd
         WHERE spend_window_matches(w, owner, NEW.provider, NEW.sent_at)
           AND spend_window_name(w) = ANY (NEW.reserved_in);
        NEW.reservation_open := false;
    END IF;
    RETURN NEW;
END;
$$;
