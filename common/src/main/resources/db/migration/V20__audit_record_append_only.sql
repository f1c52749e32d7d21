-- The audit trail is append-only (issue 31): no statement of the application may change or remove a
-- record once written. A trigger rather than a grant alone, because in the simple deployments the
-- application's role owns the table, and a grant does not bind an owner. (A role that owns the table
-- can still drop the trigger: docs/design.md's threat model says how production keeps the owner
-- apart from the role the services connect as.) Numbered V20 to stay clear of the migrations other
-- branches add in parallel; Flyway takes gaps in the numbering.
CREATE FUNCTION audit_record_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_record is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;

CREATE TRIGGER audit_record_append_only
    BEFORE UPDATE OR DELETE ON audit_record
    FOR EACH ROW EXECUTE FUNCTION audit_record_refuse_change();

CREATE TRIGGER audit_record_never_truncated
    BEFORE TRUNCATE ON audit_record
    FOR EACH STATEMENT EXECUTE FUNCTION audit_record_refuse_change();
