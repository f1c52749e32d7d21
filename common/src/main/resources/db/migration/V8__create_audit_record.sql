-- Every operator and reviewer action, written in the same transaction as the action itself:
-- who, what, when, why, and the ids it touched. Append-only.
CREATE TABLE audit_record (
    id          bigserial   PRIMARY KEY,
    at          timestamptz NOT NULL,
    actor       text        NOT NULL,
    action      text        NOT NULL,
    reason      text,
    job_id      uuid,
    attempt_id  uuid,
    details     text
);

CREATE INDEX audit_record_newest_first ON audit_record (id DESC);
CREATE INDEX audit_record_by_job ON audit_record (job_id) WHERE job_id IS NOT NULL;
