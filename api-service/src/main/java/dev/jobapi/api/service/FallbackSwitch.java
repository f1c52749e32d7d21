package dev.jobapi.api.service;

import dev.jobapi.api.security.Caller;
import dev.jobapi.common.audit.AuditTrail;
import dev.jobapi.common.fallback.KillSwitch;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.time.Clock;

/**
 * Flips the kill switch for new fallback attempts (docs/design.md, rule 11). Turning it off refuses
 * new attempts on existing jobs, manual and automatic; it deletes nothing, and every flip is
 * audited.
 */
@ApplicationScoped
public class FallbackSwitch {

    private final EntityManager em;
    private final KillSwitch killSwitch;
    private final AuditTrail audit;
    private final Clock clock;

    FallbackSwitch(EntityManager em, KillSwitch killSwitch, AuditTrail audit, Clock clock) {
        this.em = em;
        this.killSwitch = killSwitch;
        this.audit = audit;
        this.clock = clock;
    }

    public KillSwitch.State state() {
        return killSwitch.state();
    }

    @Transactional
    public KillSwitch.State set(Caller operator, boolean enabled, String reason) {
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
