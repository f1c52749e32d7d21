package dev.jobapi.common.testing;

import io.quarkus.narayana.jta.QuarkusTransaction;
import jakarta.persistence.EntityManager;

/**
 * Empties every table between tests, so each test starts from a known database. Rows are deleted
 * rather than truncated: TRUNCATE's exclusive table locks, taken one table after another, deadlock
 * with the services' background readers (relay, metrics, reconciler) that hold a lock on one table
 * while asking for the next.
 */
public final class TestDatabase {

    private static final int TRIES = 5;

    private TestDatabase() {}

    /** Runs in transactions of its own; retries when a background transaction makes it a deadlock victim. */
    public static void reset(EntityManager em) {
        for (int attempt = 1; ; attempt++) {
            try {
                QuarkusTransaction.requiringNew().run(() -> {
                    // The audit trail refuses every change to a written record; only the table's owner,
                    // which the tests connect as, may switch that off to start from empty.
                    em.createNativeQuery("ALTER TABLE audit_record DISABLE TRIGGER audit_record_append_only")
                            .executeUpdate();
                    em.createNativeQuery("DELETE FROM audit_record").executeUpdate();
                    em.createNativeQuery("ALTER TABLE audit_record ENABLE TRIGGER audit_record_append_only")
                            .executeUpdate();
                    for (String table : new String[] {
                        "webhook_delivery",
                        "webhook_endpoint",
                        "job_event",
                        "outbox",
                        "applied_patch",
                        "usage_record",
                        "generation",
                        "provider_callback",
                        "provider_acceptance",
                        "dead_letter",
                        "dead_letter_return",
                        "bulk_action_item",
                        "bulk_action",
                        "provider_pause",
                        "provider_probe",
                        "provider_health",
                        "owner_share"
                    }) {
                        em.createNativeQuery("DELETE FROM " + table).executeUpdate();
                    }
                    // Jobs and attempts reference each other; one statement deletes both, and its foreign
                    // keys are checked once, at its end.
                    em.createNativeQuery("WITH attempts AS (DELETE FROM attempt) DELETE FROM job")
                            .executeUpdate();
                    // Attempts reference the prices they were claimed at: these go after them.
                    for (String table : new String[] {"spend_window", "spend_budget", "provider_price"}) {
                        em.createNativeQuery("DELETE FROM " + table).executeUpdate();
                    }
                    em.createNativeQuery(
                                    "UPDATE fallback_switch SET enabled = true, reason = 'test reset', set_by = 'test'")
                            .executeUpdate();
                });
                return;
            } catch (RuntimeException e) {
                if (attempt == TRIES) {
                    throw e;
                }
            }
        }
    }
}
