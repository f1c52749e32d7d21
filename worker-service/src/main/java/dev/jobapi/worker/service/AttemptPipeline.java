package dev.jobapi.worker.service;

import dev.jobapi.common.message.AttemptMessage;
import dev.jobapi.worker.provider.ProviderOutcome;
import dev.jobapi.worker.provider.ProviderRegistry;
import dev.jobapi.worker.service.ClaimStep.Decision;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.UUID;

/**
 * What the worker does with one attempt message: a few steps, each one committed transaction
 * through {@link AttemptSteps}, so a redelivery at any point resumes where the last commit stopped.
 * Claim (with the provider request); call the provider once; record the answer, elect the winner
 * and reserve its apply in one step; apply on the target (git) and mark it applied. An apply to the
 * database needs no last step: it commits with the election.
 */
@ApplicationScoped
public class AttemptPipeline {

    /** What the consumer should do with the message once {@link #process} returns. */
    public enum Disposition {
        /** Every step this message asked for is committed: ack it. */
        DONE,
        /** Another worker holds a live lease: park the message in the delay queue, then ack it. */
        PARK
    }

    private final AttemptSteps steps;
    private final AttemptOutcomes outcomes;
    private final ClaimStep claim;
    private final RecordStep record;
    private final ElectionStep election;
    private final ApplyStep apply;
    private final Reconciliation reconciliation;
    private final ProviderRegistry providers;
    private final LeaseKeeper leases;
    private final WorkerMetrics metrics;

    AttemptPipeline(
            AttemptSteps steps,
            AttemptOutcomes outcomes,
            ClaimStep claim,
            RecordStep record,
            ElectionStep election,
            ApplyStep apply,
            Reconciliation reconciliation,
            ProviderRegistry providers,
            LeaseKeeper leases,
            WorkerMetrics metrics) {
        this.steps = steps;
        this.outcomes = outcomes;
        this.claim = claim;
        this.record = record;
        this.election = election;
        this.apply = apply;
        this.reconciliation = reconciliation;
        this.providers = providers;
        this.leases = leases;
        this.metrics = metrics;
    }

    /**
     * Works on one delivery of an attempt message.
     *
     * @param redelivered the broker's flag: this message was delivered before (crash, nack, replay)
     */
    public Disposition process(AttemptMessage message, boolean redelivered) {
        UUID attemptId = message.attemptId();
        Decision decision = steps.run(attemptId, Decision.NOTHING, step -> claim.decide(step, redelivered));
        switch (decision.next()) {
            case NOTHING -> {}
            case PARK -> {
                return Disposition.PARK;
            }
            case CALL -> {
                var request = decision.request();
                // The one provider call of this attempt; nothing below ever calls it again.
                ProviderOutcome outcome = leases.whileHeld(
                        attemptId,
                        () -> metrics.timeProviderCall(
                                request.provider(),
                                () -> providers.forName(request.provider()).generate(request)));
                record.recordElectAndApply(attemptId, outcome);
            }
            case ELECT -> election.electAndApply(attemptId);
            case APPLY -> apply.resume(attemptId);
            case RECONCILE -> reconciliation.reconcile(attemptId);
        }
        return Disposition.DONE;
    }

    /**
     * The attempt's message failed {@code failures} deliveries and goes to the dead-letter queue:
     * settles the attempt and its job with the reason, so nothing waits for a message nobody
     * consumes (docs/design.md, rule 14).
     */
    public void deadLettered(UUID attemptId, int failures, Throwable lastFailure) {
        String why = "its message failed " + failures + " deliveries and was dead-lettered (last: " + lastFailure + ")";
        steps.run(attemptId, null, step -> {
            outcomes.deadLettered(step, why);
            return null;
        });
    }
}
