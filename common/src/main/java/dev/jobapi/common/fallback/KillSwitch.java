package dev.jobapi.common.fallback;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.time.Instant;

/**
 * Reads the kill switch for new fallback attempts (DESIGN.md rule 11). The API refuses manual
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

    @Transactional
    public State state() {
        Object[] row = (Object[])
                em.createNativeQuery("SELECT enabled, reason, set_by, set_at FROM fallback_switch WHERE singleton")
                        .getSingleResult();
        return new State((Boolean) row[0], (String) row[1], (String) row[2], (Instant) row[3]);
    }
}
