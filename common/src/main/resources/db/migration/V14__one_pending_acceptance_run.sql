-- At most one requested or running acceptance run per provider, as a constraint: an operator's
-- request is INSERT ... ON CONFLICT DO NOTHING, and a concurrent request finds the run that won.
-- A database that somehow holds two keeps the older one pending and fails the newer ones first.
UPDATE provider_acceptance p SET state = 'failed', finished_at = now(), lease_owner = NULL, lease_expires_at = NULL
WHERE state IN ('requested', 'running')
  AND EXISTS (SELECT 1 FROM provider_acceptance older
              WHERE older.provider = p.provider AND older.state IN ('requested', 'running')
                AND (older.requested_at, older.id) < (p.requested_at, p.id));

CREATE UNIQUE INDEX provider_acceptance_one_pending ON provider_acceptance (provider)
    WHERE state IN ('requested', 'running');
