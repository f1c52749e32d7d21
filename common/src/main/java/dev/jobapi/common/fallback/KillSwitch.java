package dev.jobapi.common.fallback;

import dev.jobapi.common.audit.AuditTrail;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.time.Clock;
import java.time.Instant;

/**
 * The kill switch for new fallback attempts (docs/design.md, rule 11). The API refuses manual
 * fallbacks and the worker skips automatic ones while it is off; operators flip it through the API
 * ({@link #set}), which deletes nothing and audits every flip.
 */
@ApplicationScoped
public class KillSwitch {

    /** The switch's current position and who set it, when and why. */
    public record State(boolean enabled, String reason, String setBy, Instant setAt) {}

    private final EntityManager em;
    private final AuditTrail audit;
    private final Clock clock;

    KillSwitch(EntityManager em, AuditTrail audit, Clock clock) {
        this.em = em;
        this.audit = audit;
        this.clock = clock;
    }

    /**
     * The position, read {@code FOR SHARE} in the caller's transaction: an operator's flip (an update
     * of the same row) waits until every decision that read the old position has committed, and every
     * decision after the flip reads the new one. No attempt slips past a switch just turned off.
     */
    @Transactional
    public State state() {
        Object[] row = (Object[]) em.createNativeQuery(
                        "SELECT enabled, reason, set_by, set_at FROM fallback_switch WHERE singleton FOR SHARE")
                .getSingleResult();
        return new State((Boolean) row[0], (String) row[1], (String) row[2], (Instant) row[3]);
    }

    /**
     * An operator's flip: turning it off refuses new attempts on existing jobs, manual and automatic,
     * and deletes nothing. Audited in the same transaction.
     */
    @Transactional
    public State set(String operator, boolean enabled, String reason) {
        em.createNativeQuery("UPDATE fallback_switch SET enabled = ?1, reason = ?2, set_by = ?3, set_at = ?4")
                .setParameter(1, enabled)
                .setParameter(2, reason)
                .setParameter(3, operator)
                .setParameter(4, clock.instant())
                .executeUpdate();
        audit.record(operator, enabled ? "fallback.enabled" : "fallback.disabled", reason, null, null, null);
        return state();
    }
}
