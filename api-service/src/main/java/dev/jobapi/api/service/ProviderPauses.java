package dev.jobapi.api.service;

import dev.jobapi.common.audit.AuditTrail;
import dev.jobapi.common.provider.HeldAttempts;
import dev.jobapi.common.time.SqlTimes;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/**
 * Operators pause a provider during its outage instead of burning attempts into the dead letters
 * (docs/design.md, rule 19). While paused, a worker that takes up one of its attempts leaves it
 * starting and unclaimed and acknowledges the message uncounted; the recovery sweep does not
 * announce it again. The resume, in the transaction that ends the pause, announces every such
 * attempt again through the outbox, so each continues where it was. Each is audited in the
 * transaction of the change it records.
 */
@ApplicationScoped
public class ProviderPauses {

    /** A provider's pause: who, when and why. */
    public record Pause(String provider, String pausedBy, Instant pausedAt, String reason) {}

    /** The provider's state after a pause or a resume. */
    public record PauseState(
            String provider,
            boolean paused,
            @Schema(nullable = true) Pause pause,
            @Schema(description = "Attempts the resume announced again (0 for a pause)") long reannounced) {}

    private final EntityManager em;
    private final ProviderRegistry providers;
    private final AuditTrail audit;
    private final HeldAttempts held;
    private final Clock clock;

    ProviderPauses(EntityManager em, ProviderRegistry providers, AuditTrail audit, HeldAttempts held, Clock clock) {
        this.em = em;
        this.held = held;
        this.providers = providers;
        this.audit = audit;
        this.clock = clock;
    }

    /** Pauses the provider; a pause already in place is kept as it was (who, when, why). */
    @Transactional
    public PauseState pause(String operator, String provider, String reason) {
        providers.requireKnown(provider);
        int inserted = em.createNativeQuery("INSERT INTO provider_pause (provider, paused_by, paused_at, reason)"
                        + " VALUES (?1, ?2, ?3, ?4) ON CONFLICT (provider) DO NOTHING")
                .setParameter(1, provider)
                .setParameter(2, operator)
                .setParameter(3, clock.instant().truncatedTo(ChronoUnit.MICROS))
                .setParameter(4, reason)
                .executeUpdate();
        if (inserted == 1) {
            audit.record(operator, "provider.pause", reason, null, null, "provider " + provider);
        }
        return new PauseState(provider, true, find(provider).orElseThrow(), 0);
    }

    /**
     * Ends the pause and announces the provider's held attempts again. The delete waits for every
     * claim that read the pause (they lock it {@code FOR SHARE}), so the announcement that follows
     * sees each attempt such a claim left behind.
     */
    @Transactional
    public PauseState resume(String operator, String provider, String reason) {
        providers.requireKnown(provider);
        int deleted = em.createNativeQuery("DELETE FROM provider_pause WHERE provider = ?1")
                .setParameter(1, provider)
                .executeUpdate();
        if (deleted == 0) {
            return new PauseState(provider, false, null, 0);
        }
        int reannounced = held.announceAgain(provider, Integer.MAX_VALUE);
        audit.record(
                operator,
                "provider.resume",
                reason,
                null,
                null,
                "provider " + provider + ", " + reannounced + " held attempts announced again");
        return new PauseState(provider, false, null, reannounced);
    }

    /** The providers paused now, by name. */
    @Transactional
    @SuppressWarnings("unchecked")
    public List<String> pausedNames() {
        return em.createNativeQuery("SELECT provider FROM provider_pause ORDER BY provider")
                .getResultList();
    }

    /** The provider's pause, if it is paused. */
    @Transactional
    public Optional<Pause> find(String provider) {
        List<?> rows = em.createNativeQuery(
                        "SELECT provider, paused_by, paused_at, reason FROM provider_pause WHERE provider = ?1")
                .setParameter(1, provider)
                .getResultList();
        if (rows.isEmpty()) {
            return Optional.empty();
        }
        Object[] row = (Object[]) rows.get(0);
        return Optional.of(new Pause((String) row[0], (String) row[1], SqlTimes.instant(row[2]), (String) row[3]));
    }
}
