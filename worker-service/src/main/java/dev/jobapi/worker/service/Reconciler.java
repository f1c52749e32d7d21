package dev.jobapi.worker.service;

import dev.jobapi.common.attempt.AttemptState;
import dev.jobapi.common.health.BackgroundLoops;
import dev.jobapi.common.message.AttemptTopology;
import dev.jobapi.common.message.BrokerConnection;
import dev.jobapi.worker.config.WorkerConfig;
import dev.jobapi.worker.repository.AttemptWork;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.Scheduled.ConcurrentExecution;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.function.Consumer;
import org.jboss.logging.Logger;

/**
 * The recovery sweep: on a schedule, it finds every attempt and job that waits for a message that
 * may never come, so nothing depends on the queue to finish. Each step takes a bounded batch, and
 * one item failing never stops the others or the later steps:
 *
 * <ol>
 *   <li>claimed attempts whose lease ran out (database clock) with nothing stored: unknown, never resent;
 *   <li>open attempts whose output and provider-reported usage are stored but that were never elected;
 *   <li>starting attempts nobody claimed within a bound: announced again through the outbox;
 *   <li>elected winners whose apply stopped: resumed, least recently tried first, with backoff;
 *   <li>unknown (or reviewer-superseded) attempts with no usage: their provider is asked (rule 5).
 * </ol>
 *
 * Several workers may sweep at once: every write it leads to is conditional, so the second finds the
 * work done. Every transaction of the sweep is opened here, or, for the steps a delivery shares
 * (election, apply, reconciliation), in {@link AttemptPipeline}.
 */
@ApplicationScoped
public class Reconciler {

    private static final Logger LOG = Logger.getLogger(Reconciler.class);

    /** This loop's thread and heartbeat name. */
    static final String LOOP = "reconciler";

    private final AttemptSteps steps;
    private final AttemptOutcomes outcomes;
    private final AttemptPipeline pipeline;
    private final AttemptWork work;
    private final WorkerConfig.Reconciler config;
    private final Clock clock;
    private final BackgroundLoops loops;
    private final BrokerConnection broker;
    private final RecoverySpans recoverySpans;

    Reconciler(
            AttemptSteps steps,
            AttemptOutcomes outcomes,
            AttemptPipeline pipeline,
            AttemptWork work,
            WorkerConfig config,
            Clock clock,
            BackgroundLoops loops,
            BrokerConnection broker,
            RecoverySpans recoverySpans) {
        this.steps = steps;
        this.outcomes = outcomes;
        this.pipeline = pipeline;
        this.work = work;
        this.config = config.reconciler();
        this.clock = clock;
        this.loops = loops;
        this.broker = broker;
        this.recoverySpans = recoverySpans;
    }

    void expectHeartbeat(@Observes StartupEvent event) {
        // A round makes provider lookups and applies; a few minutes is far past a healthy one.
        loops.expect(LOOP, config.interval(), Duration.ofMinutes(5));
    }

    /**
     * Every {@code jobapi.reconciler.interval} on every worker, the first one interval after start;
     * never two rounds at once in one process, none once shutdown began.
     */
    @Scheduled(
            identity = LOOP,
            every = "${jobapi.reconciler.interval}",
            delayed = "${jobapi.reconciler.interval}",
            concurrentExecution = ConcurrentExecution.SKIP,
            skipExecutionIf = BackgroundLoops.class)
    void scheduledRound() {
        loops.round(LOOP, this::round);
    }

    /**
     * One pass of every step; returns how many lost answers were reconciled from the provider. Once
     * shutdown began it stops before the next item: each item is its own transaction, so stopping
     * between two leaves what a crash there would, and a later round resumes it.
     */
    public int round() {
        eachOf(
                "lease expiry",
                QuarkusTransaction.requiringNew().call(() -> work.expiredLeasesWithNothingStored(config.batchSize())),
                this::expireLease);
        eachOf(
                "election of a stored result",
                QuarkusTransaction.requiringNew().call(() -> work.storedResultsNeverElected(config.batchSize())),
                pipeline::electAndApply);
        announceUnclaimedAgain();
        resumeStalledApplies();
        return lookUpLostAnswers();
    }

    /**
     * A claimed attempt whose lease ran out with nothing stored and no message left to find it: the
     * same move a redelivery makes, decided again on what the step loads.
     */
    private void expireLease(UUID attemptId) {
        steps.run(attemptId, null, step -> {
            boolean stillStranded = step.attempt().state() == AttemptState.STARTING
                    && step.attempt().leaseOwner() != null
                    && !work.outputStored(attemptId)
                    && !work.leaseLive(attemptId);
            if (stillStranded) {
                outcomes.leaseLost(step);
            }
            return null;
        });
    }

    /**
     * Starting attempts nobody claimed within the bound, whose message is therefore lost, are
     * announced again. Not while the work queue holds ready messages: behind a backlog an unclaimed
     * attempt is simply waiting its turn. That guard is advice only (a quorum queue whose leader is
     * being elected answers 0 too); what keeps N sweeping workers from announcing an attempt N
     * times is the statement itself ({@link AttemptWork#reannounceUnclaimed}).
     */
    private void announceUnclaimedAgain() {
        try {
            if (readyInWorkQueue() > 0) {
                return;
            }
        } catch (RuntimeException brokerAway) {
            // Nothing can be announced now; the later steps need only the database and must still run.
            LOG.warnf("Announcements skipped this round, the work queue cannot be read: %s", brokerAway.toString());
            return;
        }
        try {
            List<UUID> announced = QuarkusTransaction.requiringNew()
                    .call(() -> work.reannounceUnclaimed(config.reannounceAfter(), config.batchSize()));
            announced.forEach(id -> LOG.warnf("Attempt %s was never claimed; announced it again", id));
        } catch (RuntimeException e) {
            LOG.errorf("Announcing unclaimed attempts again failed, a later round retries: %s", e.toString());
        }
    }

    private long readyInWorkQueue() {
        return broker.withChannel(channel ->
                (long) channel.queueDeclarePassive(AttemptTopology.QUEUE).getMessageCount());
    }

    /**
     * Winners whose apply stopped (a crash, no message left) or was put back after a failure, the
     * least recently tried first; a resume that fails again backs off further ({@link ApplyStep#defer}).
     * Should even recording that failure fail (the failure's own write refused), the job is still put
     * back here, by a statement that carries no text, so it never stays first in every round.
     */
    private void resumeStalledApplies() {
        List<Object[]> winners = QuarkusTransaction.requiringNew()
                .call(() -> work.stalledApplies(clock.instant().minus(config.stalledApplyAfter()), config.batchSize()));
        for (Object[] row : winners) {
            if (loops.stopping()) {
                return;
            }
            UUID jobId = (UUID) row[0];
            UUID winner = (UUID) row[1];
            LOG.warnf("Resuming the apply of attempt %s", winner);
            try {
                pipeline.resumeApply(winner);
            } catch (RuntimeException e) {
                LOG.errorf("Resuming the apply of attempt %s failed, put back: %s", winner, e.toString());
                try {
                    QuarkusTransaction.requiringNew()
                            .run(() -> work.deferApply(jobId, config.interval(), config.applyRetryMax()));
                } catch (RuntimeException databaseAway) {
                    LOG.debugf("Could not put the apply of job %s back: %s", jobId, databaseAway);
                }
            }
        }
    }

    private int lookUpLostAnswers() {
        var now = clock.instant();
        List<UUID> due = QuarkusTransaction.requiringNew()
                .call(() -> work.takeDueLookups(
                        now.minus(config.minAge()), now.minus(config.maxAge()), config.batchSize()));
        int reconciled = 0;
        for (UUID attemptId : due) {
            if (loops.stopping()) {
                break;
            }
            try {
                if (recoverySpans.run("lost-answer lookup", attemptId, () -> pipeline.reconcile(attemptId))) {
                    reconciled++;
                }
            } catch (RuntimeException e) {
                LOG.errorf("Reconciling attempt %s failed, a later round retries: %s", attemptId, e.toString());
            }
        }
        return reconciled;
    }

    /** Runs the step for each id until shutdown begins; one failing is logged and never stops the rest. */
    private void eachOf(String step, List<UUID> ids, Consumer<UUID> action) {
        for (UUID id : ids) {
            if (loops.stopping()) {
                return;
            }
            try {
                recoverySpans.run(step, id, () -> {
                    action.accept(id);
                    return null;
                });
            } catch (RuntimeException e) {
                LOG.errorf("Recovery (%s) of attempt %s failed, a later round retries: %s", step, id, e.toString());
            }
        }
    }
}
