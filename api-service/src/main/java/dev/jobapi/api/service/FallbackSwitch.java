package dev.jobapi.api.service;

import dev.jobapi.api.security.Caller;
import dev.jobapi.common.audit.AuditTrail;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.time.Clock;
import java.time.Instant;

/**
 * The kill switch for new fallback attempts (DESIGN.md rule 11). Turning it off refuses new
 * attempts on existing jobs; it deletes nothing, and every flip is audited.
 */
@ApplicationScoped
public class FallbackSwitch {

    /** The switch's current position and who set it, when and why. */
    public record State(boolean enabled, String reason, String setBy, Instant setAt) {}

    private final EntityManager em;
    private final AuditTrail audit;
    private final Clock clock;

    FallbackSwitch(EntityManager em, AuditTrail audit, Clock clock) {
        this.em = em;
        this.audit = audit;
        this.clock = clock;
    }

    @Transactional
    public State state() {
        Object[] row = (Object[])
                em.createNativeQuery("SELECT enabled, reason, set_by, set_at FROM fallback_switch WHERE singleton")
                        .getSingleResult();
        return new State((Boolean) row[0], (String) row[1], (String) row[2], (Instant) row[3]);
    }

    @Transactional
    public State set(Caller operator, boolean enabled, String reason) {
        em.createNativeQuery("UPDATE fallback_switch SET enabled = ?1, reason = ?2, set_by = ?3, set_at = ?4")
                .setParameter(1, enabled)
                .setParameter(2, reason)
                .setParameter(3, operator.subject())
                .setParameter(4, clock.instant())
                .executeUpdate();
        audit.record(operator.subject(), enabled ? "fallback.enabled" : "fallback.disabled", reason, null, null, null);
        return state();
    }
}
