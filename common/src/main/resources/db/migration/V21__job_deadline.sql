-- A job may carry a deadline: past it no provider call starts for the job, and a job left with
-- nothing open and nothing won ends cancelled with the reason 'expired' (docs/design.md, rule 18).
ALTER TABLE job ADD COLUMN deadline timestamptz;
ALTER TABLE job ADD COLUMN cancel_reason text;
