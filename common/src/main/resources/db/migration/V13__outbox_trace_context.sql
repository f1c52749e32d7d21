-- Tracing: the W3C trace context (https://www.w3.org/TR/trace-context/) of the transaction that
-- wrote the row, so the relay's later publish, in another thread or process, continues that trace
-- and hands it to the worker in the message headers. NULL when tracing is off or nothing was traced.
ALTER TABLE outbox ADD COLUMN traceparent text;
ALTER TABLE outbox ADD COLUMN tracestate text;

ALTER TABLE outbox ADD CONSTRAINT outbox_traceparent_is_w3c
    CHECK (traceparent ~ '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$');

-- A provider's callback links its span to its attempt's trace, found here. Only traced rows are
-- indexed, so an insert with tracing off costs what it did before.
CREATE INDEX outbox_traced_attempt ON outbox (attempt_id, id) WHERE traceparent IS NOT NULL;
