package dev.jobapi.worker.service;

import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.job.Job;
import dev.jobapi.common.job.JobEvents;
import dev.jobapi.worker.config.WorkerConfig;
import dev.jobapi.worker.provider.ProviderOutcome;
import dev.jobapi.worker.repository.AttemptWork;
import dev.jobapi.worker.service.AttemptSteps.Loaded;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * The moves every step makes the same way, each with its timeline event and metric: an attempt
 * becomes unknown, quarantined, failed or loses; a job waits for review; usage goes to the ledger.
 * Called inside a step ({@link AttemptSteps}); metrics count after the step commits.
 */
@ApplicationScoped
public class AttemptOutcomes {

    private final AttemptWork work;
    private final JobEvents events;
    private final WorkerMetrics metrics;
    private final WorkerConfig config;

    AttemptOutcomes(AttemptWork work, JobEvents events, WorkerMetrics metrics, WorkerConfig config) {
        this.work = work;
        this.events = events;
        this.metrics = metrics;
        this.config = config;
    }

    /** The provider may have the request and we do not know what it did: a person looks. Never resent. */
    void unknown(Loaded step, String reason) {
        Attempt attempt = step.attempt();
        attempt.markUnknown(reason, step.now());
        step.afterCommit(() -> metrics.attemptOutcome(attempt.provider(), "unknown"));
        events.record(attempt.jobId(), attempt.id(), "attempt.unknown", reason);
        requireReview(step, reason);
    }

    /** A claimed attempt's lease ran out with nothing stored. */
    void leaseLost(Loaded step) {
        unknown(
                step,
                "lease of " + step.attempt().leaseOwner() + " expired with no stored result;"
                        + " the provider may have the request");
    }

    /** The provider answered without usage: fail closed, hold the output until reconciled. */
    void quarantine(Loaded step, String reason) {
        Attempt attempt = step.attempt();
        attempt.quarantine(reason, step.now());
        step.afterCommit(() -> metrics.attemptOutcome(attempt.provider(), "quarantined"));
        events.record(attempt.jobId(), attempt.id(), "attempt.quarantined", reason);
    }

    void fail(Loaded step, String reason) {
        Attempt attempt = step.attempt();
        attempt.fail(reason, step.now());
        step.afterCommit(() -> metrics.attemptOutcome(attempt.provider(), "failed"));
        events.record(attempt.jobId(), attempt.id(), "attempt.failed", reason);
    }

    /** Another attempt won or the job closed: the output is kept (within the bound) and never applied. */
    void lose(Loaded step, String reason) {
        Attempt attempt = step.attempt();
        attempt.lose(reason, step.now());
        step.afterCommit(() -> metrics.electionLost(attempt.provider()));
        long dropped = work.dropOversizedOutput(attempt.id(), config.worker().loserOutputMaxBytes());
        events.record(
                attempt.jobId(),
                attempt.id(),
                "attempt.lost",
                reason + (dropped > 0 ? "; output of " + dropped + " bytes dropped (over the bound)" : "; output kept")
                        + ", never applied");
    }

    void requireReview(Loaded step, String reason) {
        Job job = step.job();
        if (!job.state().isTerminal()) {
            job.requireReview("attempt " + step.attempt().id() + ": " + reason, step.now());
            events.record(job.id(), step.attempt().id(), "job.needs_review", reason);
        }
    }

    /**
     * Records what the provider reported it spent, once per attempt; {@code null} records that it
     * reported nothing (source unknown), which is never silent spend either.
     */
    void recordUsage(Loaded step, ProviderOutcome.Usage usage) {
        Attempt attempt = step.attempt();
        work.recordUsage(attempt.id(), step.job().ownerId(), attempt.provider(), usage, step.now());
        step.afterCommit(() -> metrics.tokens(attempt.provider(), usage));
        events.record(attempt.jobId(), attempt.id(), "usage.recorded", describe(usage));
    }

    private static String describe(ProviderOutcome.Usage usage) {
        return usage == null
                ? "source unknown: the provider reported nothing"
                : "provider_reported: " + usage.promptTokens() + " prompt + " + usage.completionTokens()
                        + " completion tokens";
    }
}
