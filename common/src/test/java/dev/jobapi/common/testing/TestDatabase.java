package dev.jobapi.common.testing;

import jakarta.persistence.EntityManager;

/** Empties every table between tests, so each test starts from a known database. */
public final class TestDatabase {

    private TestDatabase() {}

    /** Must run inside a transaction. */
    public static void reset(EntityManager em) {
        em.createNativeQuery(
                        "TRUNCATE job_event, audit_record, outbox, applied_patch, usage_record, generation, attempt, job CASCADE")
                .executeUpdate();
        em.createNativeQuery("UPDATE fallback_switch SET enabled = true, reason = 'test reset', set_by = 'test'")
                .executeUpdate();
    }
}
