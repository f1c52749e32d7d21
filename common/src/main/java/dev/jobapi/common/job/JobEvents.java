package dev.jobapi.common.job;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.time.Clock;
import java.util.UUID;

/**
 * Appends to a job's timeline in the caller's transaction, so an event exists exactly when the
 * change it describes committed.
 */
@ApplicationScoped
public class JobEvents {

    private final EntityManager em;
    private final Clock clock;

    JobEvents(EntityManager em, Clock clock) {
        this.em = em;
        this.clock = clock;
    }

    @Transactional(Transactional.TxType.MANDATORY)
    public void record(UUID jobId, UUID attemptId, String kind, String detail) {
        em.createNativeQuery("INSERT INTO job_event (job_id, attempt_id, at, kind, detail) VALUES (?1, ?2, ?3, ?4, ?5)")
                .setParameter(1, jobId)
                .setParameter(2, attemptId)
                .setParameter(3, clock.instant())
                .setParameter(4, kind)
                .setParameter(5, detail)
                .executeUpdate();
    }
}
