package dev.jobapi.common.audit;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.time.Clock;
import java.util.UUID;

/** Writes the audit record of an operator or reviewer action, in that action's transaction. */
@ApplicationScoped
public class AuditTrail {

    private final EntityManager em;
    private final Clock clock;

    AuditTrail(EntityManager em, Clock clock) {
        this.em = em;
        this.clock = clock;
    }

    @Transactional(Transactional.TxType.MANDATORY)
    public void record(String actor, String action, String reason, UUID jobId, UUID attemptId, String details) {
        em.createNativeQuery("INSERT INTO audit_record (at, actor, action, reason, job_id, attempt_id, details)"
                        + " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")
                .setParameter(1, clock.instant())
                .setParameter(2, actor)
                .setParameter(3, action)
                .setParameter(4, reason)
                .setParameter(5, jobId)
                .setParameter(6, attemptId)
                .setParameter(7, details)
                .executeUpdate();
    }
}
