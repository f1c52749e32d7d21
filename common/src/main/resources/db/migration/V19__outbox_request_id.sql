-- The X-Request-Id of the request whose transaction wrote the row (or of the worker's work that did,
-- itself carrying a request's id), so the relay's message hands it to the worker, whose log lines of
-- that work carry it. NULL for rows written outside any request (the sweep's re-announcements).
ALTER TABLE outbox ADD COLUMN request_id text;

ALTER TABLE outbox ADD CONSTRAINT outbox_request_id_well_formed
    CHECK (request_id ~ '^[A-Za-z0-9._:-]{1,128}$');
