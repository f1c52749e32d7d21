package dev.jobapi.worker.service;

import dev.jobapi.worker.config.WorkerConfig;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.persistence.EntityManager;
import java.time.Clock;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * Looks, on a schedule, for attempts whose answer was lost (unknown, or superseded by a reviewer
 * while the provider may still have worked) and that have no usage recorded, and asks their
 * provider what happened, the least recently asked first. It also resumes applies that a crash
 * stopped after the election where no message is left to redeliver. Several workers may do this at
 * once: every write it leads to is conditional, so the second one finds the work done.
 */
@ApplicationScoped
public class Reconciler {

    private static final Logger LOG = Logger.getLogger(Reconciler.class);

    private final AttemptPipeline pipeline;
    private final EntityManager em;
    private final WorkerConfig.Reconciler config;
    private final Clock clock;
    private ScheduledExecutorService scheduler;

    Reconciler(AttemptPipeline pipeline, EntityManager em, WorkerConfig config, Clock clock) {
        this.pipeline = pipeline;
        this.em = em;
        this.config = config.reconciler();
        this.clock = clock;
    }

    void start(@Observes StartupEvent event) {
        scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "reconciler");
            t.setDaemon(true);
            return t;
        });
        long every = config.interval().toMillis();
        scheduler.scheduleWithFixedDelay(this::roundQuietly, every, every, TimeUnit.MILLISECONDS);
    }

    void stop(@Observes ShutdownEvent event) {
        if (scheduler != null) {
            scheduler.shutdownNow();
        }
    }

    private void roundQuietly() {
        try {
            round();
        } catch (RuntimeException e) {
            LOG.warnf("Reconciliation round failed, will retry: %s", e.toString());
        }
    }

    /** One pass over the candidates; returns how many were reconciled. */
    public int round() {
        resumeStalledApplies();
        var now = clock.instant();
        @SuppressWarnings("unchecked")
        List<UUID> candidates = QuarkusTransaction.requiringNew()
                .call(() -> em.createNativeQuery("SELECT a.id FROM attempt a WHERE a.sent_at IS NOT NULL"
                                + " AND (a.state = 'unknown' AND NOT a.quarantined OR a.state = 'superseded')"
                                + " AND NOT EXISTS (SELECT 1 FROM usage_record u WHERE u.attempt_id = a.id)"
                                + " AND a.sent_at < ?1 AND a.sent_at > ?2"
                                + " ORDER BY a.looked_up_at NULLS FIRST, a.sent_at LIMIT ?3")
                        .setParameter(1, now.minus(config.minAge()))
                        .setParameter(2, now.minus(config.maxAge()))
                        .setParameter(3, config.batchSize())
                        .getResultList());
        int reconciled = 0;
        for (UUID attemptId : candidates) {
            if (pipeline.reconcile(attemptId)) {
                reconciled++;
            }
            QuarkusTransaction.requiringNew()
                    .run(() -> em.createNativeQuery("UPDATE attempt SET looked_up_at = ?1 WHERE id = ?2")
                            .setParameter(1, clock.instant())
                            .setParameter(2, attemptId)
                            .executeUpdate());
        }
        return reconciled;
    }

    private void resumeStalledApplies() {
        @SuppressWarnings("unchecked")
        List<UUID> winners = QuarkusTransaction.requiringNew().call(() -> em.createNativeQuery(
                        "SELECT winning_attempt_id FROM job WHERE winning_attempt_id IS NOT NULL"
                                + " AND state IN ('accepted', 'running', 'needs_review') AND updated_at < ?1"
                                + " ORDER BY updated_at LIMIT ?2")
                .setParameter(1, clock.instant().minus(config.stalledApplyAfter()))
                .setParameter(2, config.batchSize())
                .getResultList());
        for (UUID winner : winners) {
            LOG.warnf("Resuming the apply of attempt %s, stopped after its election", winner);
            try {
                pipeline.resumeApply(winner);
            } catch (RuntimeException e) {
                // One target refusing must not hold up the others or the lookups below.
                LOG.errorf("Apply of attempt %s failed again, next round retries: %s", winner, e.toString());
            }
        }
    }
}
