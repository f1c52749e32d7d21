package dev.jobapi.worker.service;

import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.attempt.AttemptState;
import dev.jobapi.common.digest.Sha256;
import dev.jobapi.common.job.Job;
import dev.jobapi.common.job.JobEventKind;
import dev.jobapi.common.job.JobEvents;
import dev.jobapi.worker.config.WorkerConfig;
import dev.jobapi.worker.provider.ProviderOutcome;
import dev.jobapi.worker.repository.AttemptWork;
import dev.jobapi.worker.service.AttemptSteps.Loaded;
import jakarta.inject.Singleton;

/**
 * The moves every step makes the same way, each with its timeline event and metric: an attempt
 * becomes unknown, quarantined, failed or loses; a job waits for review; usage goes to the ledger.
 * Called inside a step ({@link AttemptSteps}); metrics count after the step commits.
 */
@Singleton
public class AttemptOutcomes {

    /** Why an attempt is held in quarantine. */
    static final String QUARANTINE_REASON = "provider reported no usage; held until reconciled";

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
        events.record(attempt.jobId(), attempt.id(), JobEventKind.ATTEMPT_UNKNOWN, reason);
        requireReview(step, reason);
    }

    /** A claimed attempt's lease ran out with nothing stored. */
    void leaseLost(Loaded step) {
        unknown(
                step,
                "lease of " + step.attempt().leaseOwner() + " expired with no stored result;"
                        + " the provider may have the request");
    }

    /**
     * The attempt's message is going to the dead-letter queue: no delivery will move it again, so
     * the attempt is settled here, never left {@code starting} behind a message nobody consumes.
     * Never claimed: nothing was sent, it fails and the job waits for its owner. Claimed and its
     * lease run out with nothing stored: unknown, as after any lost lease. A live lease, a stored
     * result or any later state is another path's to finish (the lease holder, the sweep).
     */
    void deadLettered(Loaded step, String why) {
        Attempt attempt = step.attempt();
        if (attempt.state() != AttemptState.STARTING || work.outputStored(attempt.id())) {
            return;
        }
        if (attempt.leaseOwner() == null) {
            step.lockJob();
            fail(step, "not sent: " + why);
            awaitOwnerIfNothingOpen(step);
        } else if (!work.leaseLive(attempt.id())) {
            unknown(step, why + "; the provider may have the request");
        }
    }

    /**
     * The answer is stored without the provider's usage (rule 4 fails closed): the attempt is held
     * for an operator, never elected, and its job waits in review. Every path that finds such an
     * answer (the call, a reconciliation, the election of an answer stored alone) comes here.
     */
    void quarantineUnpaid(Loaded step) {
        Attempt attempt = step.attempt();
        attempt.quarantine(QUARANTINE_REASON, step.now());
        step.afterCommit(() -> metrics.attemptOutcome(attempt.provider(), "quarantined"));
        events.record(attempt.jobId(), attempt.id(), JobEventKind.ATTEMPT_QUARANTINED, QUARANTINE_REASON);
        requireReview(step, "usage missing, quarantined");
    }

    void fail(Loaded step, String reason) {
        Attempt attempt = step.attempt();
        attempt.fail(reason, step.now());
        step.afterCommit(() -> metrics.attemptOutcome(attempt.provider(), "failed"));
        events.record(attempt.jobId(), attempt.id(), JobEventKind.ATTEMPT_FAILED, reason);
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
                JobEventKind.ATTEMPT_LOST,
                reason + (dropped > 0 ? "; output of " + dropped + " bytes dropped (over the bound)" : "; output kept")
                        + ", never applied");
    }

    /**
     * After a definitive failure that started no fallback: when no other attempt of the job is open
     * and none won, the job waits for its owner with the failure stated (rule 14). Call with the job
     * locked, as every decision that reads the job's other attempts.
     */
    void awaitOwnerIfNothingOpen(Loaded step) {
        Attempt ended = step.attempt();
        Job job = step.job();
        if (!nothingElseOpenOrWon(step) || job.state().isTerminal()) {
            return;
        }
        job.awaitOwner("attempt " + ended.id() + " (" + ended.provider() + ") failed: " + ended.reason(), step.now());
        events.record(job.id(), ended.id(), JobEventKind.JOB_NEEDS_REVIEW, job.reviewReason());
    }

    /**
     * Whether the step's job has no attempt open besides the step's own and no winner: nothing of it
     * can still produce a result. Call with the job locked, as {@link #awaitOwnerIfNothingOpen}.
     */
    boolean nothingElseOpenOrWon(Loaded step) {
        return step.job().winningAttemptId() == null
                && !work.anotherAttemptOpen(step.job().id(), step.attempt().id());
    }

    private void requireReview(Loaded step, String reason) {
        Job job = step.job();
        if (!job.state().isTerminal()) {
            job.requireReview("attempt " + step.attempt().id() + ": " + reason, step.now());
            events.record(job.id(), step.attempt().id(), JobEventKind.JOB_NEEDS_REVIEW, reason);
        }
    }

    /**
     * Stores a completed answer once per attempt, its patch as the attempt's generation and the usage
     * the provider reported, by one statement. When another path stored a generation first (a
     * reconciliation, a redelivery), that one is the attempt's output. The step keeps the stored
     * patch for its apply.
     *
     * @return the digest of the attempt's stored output
     */
    String storeAnswer(Loaded step, byte[] patch, ProviderOutcome.Usage usage) {
        Attempt attempt = step.attempt();
        String digest = Sha256.prefixed(patch);
        AttemptWork.StoredAnswer stored = work.storeAnswer(
                attempt.id(), patch, digest, step.job().ownerId(), attempt.provider(), usage, step.now());
        usageStored(step, usage, stored.usageStored());
        if (stored.generationStored()) {
            step.keepStoredPatch(patch);
            return digest;
        }
        return work.storedOutput(attempt.id())
                .map(first -> {
                    step.keepStoredPatch(first.patch());
                    return first.outputDigest();
                })
                .orElse(digest);
    }

    /**
     * Records what the provider reported it spent, once per attempt; {@code null} records that it
     * reported nothing (source unknown), which is never silent spend either.
     */
    void recordUsage(Loaded step, ProviderOutcome.Usage usage) {
        Attempt attempt = step.attempt();
        usageStored(
                step,
                usage,
                work.recordUsage(attempt.id(), step.job().ownerId(), attempt.provider(), usage, step.now()));
        events.record(attempt.jobId(), attempt.id(), JobEventKind.USAGE_RECORDED, describe(usage));
    }

    /** What the step keeps of a usage it wrote ({@code stored}) or found written, and its metric. */
    private void usageStored(Loaded step, ProviderOutcome.Usage usage, boolean stored) {
        if (stored && usage != null) {
            step.keepReportedUsageStored();
        }
        String provider = step.attempt().provider();
        step.afterCommit(() -> metrics.tokens(provider, usage));
    }

    static String describe(ProviderOutcome.Usage usage) {
        return usage == null
                ? "source unknown: the provider reported nothing"
                : "provider_reported: " + usage.promptTokens() + " prompt + " + usage.completionTokens()
                        + " completion tokens";
    }
}
