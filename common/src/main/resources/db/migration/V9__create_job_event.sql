-- The job's history in order, one row per thing that happened to it (requests, replays,
-- attempts and their transitions, deliveries, the winner, the apply, usage), written in the same
-- transaction as the change it describes. GET /jobs/{id}/timeline reads it.
CREATE TABLE job_event (
    id          bigserial   PRIMARY KEY,
    job_id      uuid        NOT NULL REFERENCES job (id),
    attempt_id  uuid,
    at          timestamptz NOT NULL,
    kind        text        NOT NULL,
    detail      text
);

CREATE INDEX job_event_by_job ON job_event (job_id, id);
