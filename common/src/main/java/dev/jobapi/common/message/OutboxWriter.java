package dev.jobapi.common.message;

import dev.jobapi.common.attempt.Attempt;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.time.Clock;

/**
 * Writes the outbox row that announces an attempt, in the caller's transaction: the attempt and
 * its message commit together or not at all.
 */
@ApplicationScoped
public class OutboxWriter {

    private final EntityManager em;
    private final Clock clock;

    OutboxWriter(EntityManager em, Clock clock) {
        this.em = em;
        this.clock = clock;
    }

    @Transactional(Transactional.TxType.MANDATORY)
    public void announce(Attempt attempt) {
        // The attempt row must exist before the row that references it.
        em.flush();
        em.createNativeQuery("INSERT INTO outbox (attempt_id, job_id, created_at) VALUES (?1, ?2, ?3)")
                .setParameter(1, attempt.id())
                .setParameter(2, attempt.jobId())
                .setParameter(3, clock.instant())
                .executeUpdate();
    }
}
