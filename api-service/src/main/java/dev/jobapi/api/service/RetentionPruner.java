package dev.jobapi.api.service;

import dev.jobapi.api.config.JobApiConfig;
import dev.jobapi.common.attempt.AttemptState;
import dev.jobapi.common.health.BackgroundLoops;
import dev.jobapi.common.job.JobState;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.Scheduled.ConcurrentExecution;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.persistence.EntityManager;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import org.jboss.logging.Logger;

/**
 * Deletes what is past its use, in small batches, one replica at a time: outputs of losing
 * attempts after {@code losing-output-age}, apply keys of closed jobs after {@code applied-key-age}
 * (past any redelivery window, a closed job is never applied again anyway), and the sent outbox
 * rows of ended attempts after {@code sent-outbox-age} (one row an attempt and an announcement,
 * which nothing else ever deleted). Never a job, an attempt, a usage record or an audit record: the
 * ledger stays.
 */
@ApplicationScoped
public class RetentionPruner {

    /** Attempts that ended without winning: their outputs are the losing ones that age out. */
    private static final String[] LOSERS =
            AttemptState.wireNames(EnumSet.of(AttemptState.SUPERSEDED, AttemptState.FAILED)::contains);

    /**
     * Attempts that can move no more: their outbox rows are announcements no one repeats. An open
     * attempt's rows stay whatever their age: announcing it again copies its first row's trace.
     */
    private static final String[] ENDED = AttemptState.wireNames(AttemptState::isTerminal);

    private static final Logger LOG = Logger.getLogger(RetentionPruner.class);
    // Any constant shared by all replicas; only the holder of this advisory lock prunes.
    private static final long LOCK_ID = 0x6a6f6261_70697275L;

    /** This loop's scheduler identity and heartbeat name. */
    static final String LOOP = "retention-pruner";

    /** What one prune deleted. */
    public record Pruned(long losingOutputs, long appliedKeys, long sentOutboxRows) {}

    private final EntityManager em;
    private final JobApiConfig.Retention config;
    private final Clock clock;
    private final BackgroundLoops loops;

    RetentionPruner(EntityManager em, JobApiConfig config, Clock clock, BackgroundLoops loops) {
        this.em = em;
        this.loops = loops;
        this.config = config.retention();
        this.clock = clock;
    }

    void expectHeartbeat(@Observes StartupEvent event) {
        loops.expect(LOOP, config.interval(), Duration.ofMinutes(5));
    }

    /**
     * Every {@code jobapi.retention.interval} on every replica (the advisory lock lets one prune),
     * the first one interval after start; never two at once, none once shutdown began.
     */
    @Scheduled(
            identity = LOOP,
            every = "${jobapi.retention.interval}",
            delayed = "${jobapi.retention.interval}",
            concurrentExecution = ConcurrentExecution.SKIP,
            skipExecutionIf = BackgroundLoops.class)
    void scheduledPrune() {
        loops.round(LOOP, this::pruneAndReport);
    }

    private void pruneAndReport() {
        Pruned pruned = prune();
        if (pruned.losingOutputs() + pruned.appliedKeys() + pruned.sentOutboxRows() > 0) {
            LOG.infof(
                    "Retention pruned %d losing outputs, %d apply keys and %d sent outbox rows",
                    pruned.losingOutputs(), pruned.appliedKeys(), pruned.sentOutboxRows());
        }
    }

    /**
     * Prunes until nothing old is left, one batch per transaction; once shutdown began it stops after
     * the batch in hand (the next process's prune deletes the rest).
     */
    public Pruned prune() {
        Instant now = clock.instant();
        long outputs = pruneAll(
                "DELETE FROM generation WHERE attempt_id IN (SELECT g.attempt_id FROM generation g"
                        + " JOIN attempt a ON a.id = g.attempt_id JOIN job j ON j.id = a.job_id"
                        + " WHERE a.state = ANY(?3)"
                        + " AND (j.winning_attempt_id IS NULL OR j.winning_attempt_id <> a.id)"
                        + " AND g.created_at < ?1 LIMIT ?2)",
                now.minus(config.losingOutputAge()),
                LOSERS);
        long keys = pruneAll(
                "DELETE FROM applied_patch WHERE idem_key IN (SELECT p.idem_key FROM applied_patch p"
                        + " JOIN job j ON j.id = p.job_id WHERE j.state = ANY(?3)"
                        + " AND p.status = 'applied' AND p.applied_at < ?1 LIMIT ?2)",
                now.minus(config.appliedKeyAge()),
                JobState.wireNames(JobState::isTerminal));
        // In the order of the primary key: the oldest rows come first, with no index on sent_at.
        long outboxRows = pruneAll(
                "DELETE FROM outbox WHERE id IN (SELECT o.id FROM outbox o JOIN attempt a ON a.id = o.attempt_id"
                        + " WHERE o.sent_at < ?1 AND a.state = ANY(?3) ORDER BY o.id LIMIT ?2)",
                now.minus(config.sentOutboxAge()),
                ENDED);
        return new Pruned(outputs, keys, outboxRows);
    }

    /**
     * Runs {@code delete} batch after batch while a batch came back full and shutdown has not begun;
     * returns how many rows it deleted (none when another replica holds the lock).
     */
    private long pruneAll(String delete, Instant olderThan, String[] states) {
        long deleted = 0;
        int batch;
        do {
            batch = batch(delete, olderThan, states);
            deleted += Math.max(batch, 0);
        } while (batch == config.batchSize() && !loops.stopping());
        return deleted;
    }

    /** One batch under the advisory lock; -1 when another replica holds it. */
    private int batch(String delete, Instant olderThan, String[] states) {
        return QuarkusTransaction.requiringNew().call(() -> {
            boolean mine = (Boolean) em.createNativeQuery("SELECT pg_try_advisory_xact_lock(?1)")
                    .setParameter(1, LOCK_ID)
                    .getSingleResult();
            if (!mine) {
                return -1;
            }
            return em.createNativeQuery(delete)
                    .setParameter(1, olderThan)
                    .setParameter(2, config.batchSize())
                    .setParameter(3, states)
                    .executeUpdate();
        });
    }
}
