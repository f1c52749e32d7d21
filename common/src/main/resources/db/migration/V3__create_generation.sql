-- The stored output of an attempt, written once. A redelivery or a retry reads these bytes;
-- it never asks the provider again. A new generation is a new attempt.
CREATE TABLE generation (
    attempt_id     uuid        PRIMARY KEY REFERENCES attempt (id),
    patch          bytea       NOT NULL,
    output_digest  text        NOT NULL,
    created_at     timestamptz NOT NULL
);
