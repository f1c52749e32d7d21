package dev.jobapi.common.fallback;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.time.Instant;

/**
 * Reads the kill switch for new fallback attempts (docs/design.md, rule 11). The API refuses manual
 * fallbacks and the worker skips automatic ones while it is off; operators flip it through the API.
 */
@ApplicationScoped
public class KillSwitch {

    /** The switch's current position and who set it, when and why. */
    public record State(boolean enabled, String reason, String setBy, Instant setAt) {}

    private final EntityManager em;

    KillSwitch(EntityManager em) {
        this.em = em;
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
}
