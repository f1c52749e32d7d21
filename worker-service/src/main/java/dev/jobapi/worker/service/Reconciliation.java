package dev.jobapi.worker.service;

import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.attempt.AttemptRepository;
import dev.jobapi.common.attempt.AttemptState;
import dev.jobapi.common.callback.CallbackInbox;
import dev.jobapi.common.job.JobEventKind;
import dev.jobapi.common.job.JobEvents;
import dev.jobapi.worker.provider.ProviderOutcome;
import dev.jobapi.worker.provider.ProviderRegistry;
import dev.jobapi.worker.service.AttemptSteps.Loaded;
import io.quarkus.narayana.jta.QuarkusTransaction;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Optional;
import java.util.UUID;

/**
 * Reconciliation (rule 5): asks the provider what became of an attempt whose answer was lost, or
 * reads the signed callback it pushed. A found result is stored like any other and goes through the
 * same election and apply; for an attempt superseded meanwhile it is recorded (output and usage: no
 * silent spend) and never applied. Nothing found: the attempt stays as it is, for a later round.
 */
@ApplicationScoped
public class Reconciliation {

    private final AttemptSteps steps;
    private final AttemptRepository attempts;
    private final AttemptOutcomes outcomes;
    private final ElectionStep election;
    private final ApplyStep apply;
    private final ProviderRegistry providers;
    private final CallbackInbox callbacks;
    private final JobEvents events;

    Reconciliation(
            AttemptSteps steps,
            AttemptRepository attempts,
            AttemptOutcomes outcomes,
            ElectionStep election,
            ApplyStep apply,
            ProviderRegistry providers,
            CallbackInbox callbacks,
            JobEvents events) {
        this.steps = steps;
        this.attempts = attempts;
        this.outcomes = outcomes;
        this.election = election;
        this.apply = apply;
        this.providers = providers;
        this.callbacks = callbacks;
        this.events = events;
    }

    /** @return true when a result was found and recorded */
    public boolean reconcile(UUID attemptId) {
        Attempt attempt = QuarkusTransaction.requiringNew().call(() -> attempts.findById(attemptId));
        if (attempt == null) {
            return false;
        }
        Optional<ProviderOutcome> found = fromCallback(attemptId)
                .or(() -> providers.forName(attempt.provider()).lookup(attemptId, attempt.remoteId()));
        if (found.isEmpty()) {
            return false;
        }
        if (found.get() instanceof ProviderOutcome.Failed failed) {
            steps.run(attemptId, null, step -> recordFailure(step, failed));
            return true;
        }
        ProviderOutcome.Completed completed = (ProviderOutcome.Completed) found.get();
        apply.finish(
                attemptId,
                steps.run(
                        attemptId,
                        null,
                        step -> recordResult(step, completed) && election.elect(step) ? apply.reserve(step) : null));
        return true;
    }

    /** A verified callback the provider pushed for this attempt, read like a lookup's answer. */
    private Optional<ProviderOutcome> fromCallback(UUID attemptId) {
        return QuarkusTransaction.requiringNew()
                .call(() -> callbacks.find(attemptId))
                .map(callback -> ProviderOutcome.answer(
                        callback.remoteId(),
                        callback.output(),
                        callback.promptTokens() == null
                                ? null
                                : new ProviderOutcome.Usage(callback.promptTokens(), callback.completionTokens())));
    }

    /** @return true when the attempt goes on to the election */
    private boolean recordResult(Loaded step, ProviderOutcome.Completed completed) {
        Attempt attempt = step.attempt();
        if (attempts.usage(attempt.id()).isPresent()) {
            return false; // reconciled already, by another worker or an earlier round
        }
        String digest = outcomes.storeGeneration(step, completed.patch());
        events.record(
                attempt.jobId(),
                attempt.id(),
                JobEventKind.ATTEMPT_RECONCILED,
                "provider has " + completed.remoteId() + ", " + digest);
        outcomes.recordUsage(step, completed.usage());
        if (attempt.state() != AttemptState.UNKNOWN) {
            return false; // superseded or held meanwhile: recorded, never applied
        }
        attempt.recordRemoteId(completed.remoteId(), step.now());
        attempt.recordOutput(digest, step.now());
        if (completed.usage() == null) {
            outcomes.quarantine(step, "provider reported no usage; held until reconciled");
            return false;
        }
        return true;
    }

    /**
     * The provider's stored answer was no answer (cut off at the output limit): its usage goes to the
     * ledger (no silent spend) and a still-unknown attempt fails with the reason; the job then waits
     * for its owner like after any failure.
     */
    private Void recordFailure(Loaded step, ProviderOutcome.Failed failed) {
        Attempt attempt = step.attempt();
        if (attempts.usage(attempt.id()).isPresent()) {
            return null; // reconciled already
        }
        events.record(
                attempt.jobId(),
                attempt.id(),
                JobEventKind.ATTEMPT_RECONCILED,
                "provider has " + failed.remoteId() + ": " + failed.reason());
        outcomes.recordUsage(step, failed.usage());
        if (attempt.state() == AttemptState.UNKNOWN) {
            outcomes.fail(step, failed.reason());
            outcomes.awaitOwnerIfNothingOpen(step);
        }
        return null;
    }
}
