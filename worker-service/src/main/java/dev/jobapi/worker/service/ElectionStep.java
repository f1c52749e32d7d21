package dev.jobapi.worker.service;

import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.attempt.AttemptState;
import dev.jobapi.common.job.Job;
import dev.jobapi.common.job.JobEventKind;
import dev.jobapi.common.job.JobEvents;
import dev.jobapi.common.tracing.TraceAttributes;
import dev.jobapi.common.tracing.Tracing;
import dev.jobapi.worker.repository.AttemptWork;
import dev.jobapi.worker.service.AttemptSteps.Loaded;
import jakarta.inject.Singleton;
import java.util.Optional;

/**
 * One winner per job (rule 6), decided by the job's version: the election writes the winner
 * through the job entity, and of two attempts electing themselves at once the second fails its
 * version check; its step runs again ({@link AttemptSteps}), finds the winner, and loses. No row
 * lock is taken for it. The loser's output is kept (within a bound) and never applied. A function
 * of the loaded attempt: {@link AttemptPipeline} runs it in the step that records the answer, or
 * in a step of its own for an answer stored before.
 */
@Singleton
public class ElectionStep {

    private final AttemptWork work;
    private final AttemptOutcomes outcomes;
    private final JobEvents events;
    private final WorkerMetrics metrics;
    private final Tracing tracing;

    ElectionStep(AttemptWork work, AttemptOutcomes outcomes, JobEvents events, WorkerMetrics metrics, Tracing tracing) {
        this.tracing = tracing;
        this.work = work;
        this.outcomes = outcomes;
        this.events = events;
        this.metrics = metrics;
    }

    /**
     * Elects the attempt if its job has no winner and is open, else it loses.
     *
     * @return true when the attempt is the job's winner and its apply is still to do
     */
    boolean elect(Loaded step) {
        return tracing.inSpan("attempt.elect", step.job().id(), step.attempt().id(), span -> {
            boolean won = decide(step);
            span.setAttribute(TraceAttributes.ELECTED, won);
            return won;
        });
    }

    private boolean decide(Loaded step) {
        Attempt attempt = step.attempt();
        Job job = step.job();
        // Unknown, never quarantined: a held answer waits for an operator, who releases it to unknown.
        boolean resolvedUnknown = attempt.state() == AttemptState.UNKNOWN;
        boolean open = attempt.state() == AttemptState.STARTING || resolvedUnknown;
        // An answer stored by another path (a reconciliation, a record step that could only commit the
        // answer alone) has its generation but not yet its digest on the attempt.
        if (open && attempt.outputDigest() == null) {
            Optional<AttemptWork.StoredOutput> stored = work.storedOutput(attempt.id());
            if (stored.isEmpty()) {
                return false; // nothing to elect yet
            }
            attempt.recordOutput(stored.get().outputDigest(), step.now());
        }
        if (attempt.state() != AttemptState.STARTING && !resolvedUnknown) {
            return attempt.state() == AttemptState.SUCCEEDED
                    && attempt.id().equals(job.winningAttemptId())
                    && !job.state().isTerminal();
        }
        if (job.state().isTerminal() || job.winningAttemptId() != null) {
            outcomes.lose(
                    step,
                    job.winningAttemptId() != null
                            ? "attempt " + job.winningAttemptId() + " won the job"
                            : "job was " + job.state().wireName() + " when this result arrived");
            return false;
        }
        boolean paidFor = step.reportedUsageStored() || work.usageReported(attempt.id());
        if (!paidFor) {
            // Rule 4 fails closed on every path here (a redelivery, the sweep, a reconciliation): an
            // answer stored without the provider's figures, by a step that could commit nothing else,
            // is held for an operator, never elected.
            outcomes.quarantineUnpaid(step);
            return false;
        }
        job.elect(attempt.id(), step.now());
        attempt.succeed(step.now());
        step.afterCommit(() -> metrics.attemptOutcome(attempt.provider(), "succeeded"));
        events.record(job.id(), attempt.id(), JobEventKind.WINNER_ELECTED, "output " + attempt.outputDigest());
        return true;
    }
}
