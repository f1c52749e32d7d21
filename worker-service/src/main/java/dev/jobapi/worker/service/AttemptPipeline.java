package dev.jobapi.worker.service;

import dev.jobapi.common.message.AttemptMessage;
import dev.jobapi.common.tracing.TraceAttributes;
import dev.jobapi.common.tracing.Tracing;
import dev.jobapi.worker.provider.ProviderOutcome;
import dev.jobapi.worker.provider.ProviderRegistry;
import dev.jobapi.worker.service.ClaimStep.Decision;
import io.opentelemetry.api.trace.Span;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Locale;
import java.util.UUID;

/**
 * What the worker does with one attempt message: a few steps, each one committed transaction
 * through {@link AttemptSteps}, so a redelivery at any point resumes where the last commit stopped.
 * Claim (with the provider request); call the provider once; record the answer, elect the winner
 * and reserve its apply in one step; apply on the target (git) and mark it applied. An apply to the
 * database needs no last step: it commits with the election.
 *
 * <p>Each step is a span of the delivery's trace (docs/trace-example.md): {@value #CLAIM_SPAN},
 * {@value #PROVIDER_SPAN} here, {@code attempt.record}, {@code attempt.elect} and {@code
 * attempt.apply} in their steps.
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

    static final String CLAIM_SPAN = "attempt.claim";
    static final String PROVIDER_SPAN = "provider.call";

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
    private final Tracing tracing;

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
            WorkerMetrics metrics,
            Tracing tracing) {
        this.tracing = tracing;
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
        UUID jobId = message.jobId();
        Decision decision = tracing.inSpan(CLAIM_SPAN, jobId, attemptId, span -> {
            Decision decided = steps.run(attemptId, Decision.NOTHING, step -> claim.decide(step, redelivered));
            span.setAttribute(TraceAttributes.CLAIM_NEXT, decided.next().name().toLowerCase(Locale.ROOT));
            return decided;
        });
        switch (decision.next()) {
            case NOTHING -> {}
            case PARK -> {
                return Disposition.PARK;
            }
            case CALL -> {
                var request = decision.request();
                // The one provider call of this attempt; nothing below ever calls it again.
                ProviderOutcome outcome = tracing.inSpan(PROVIDER_SPAN, jobId, attemptId, span -> {
                    span.setAttribute(TraceAttributes.PROVIDER, request.provider());
                    providers
                            .model(request.provider())
                            .ifPresent(model -> span.setAttribute(TraceAttributes.MODEL, model));
                    ProviderOutcome answered = leases.whileHeld(
                            attemptId,
                            () -> metrics.timeProviderCall(
                                    request.provider(),
                                    () -> providers.forName(request.provider()).generate(request)));
                    describe(span, answered);
                    return answered;
                });
                record.recordElectAndApply(attemptId, outcome);
            }
            case ELECT -> election.electAndApply(attemptId);
            case APPLY -> apply.resume(attemptId);
            case RECONCILE -> reconciliation.reconcile(attemptId);
        }
        return Disposition.DONE;
    }

    /**
     * The failure and, when it wraps one, its first cause: a write refused at commit surfaces as the
     * transaction manager's "could not commit", and the reason must name what the database said.
     */
    private static String describe(Throwable failure) {
        Throwable root = failure;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root == failure ? failure.toString() : failure + ", caused by " + root;
    }

    /** What the provider call came to, with the tokens the provider reported, on its span. */
    private static void describe(Span span, ProviderOutcome outcome) {
        ProviderOutcome.Usage usage = null;
        if (outcome instanceof ProviderOutcome.Completed completed) {
            span.setAttribute(TraceAttributes.OUTCOME, "completed");
            usage = completed.usage();
        } else if (outcome instanceof ProviderOutcome.Failed failed) {
            span.setAttribute(TraceAttributes.OUTCOME, "failed");
            usage = failed.usage();
        } else {
            span.setAttribute(TraceAttributes.OUTCOME, "unknown");
        }
        if (usage != null) {
            span.setAttribute(TraceAttributes.TOKENS_IN, (long) usage.promptTokens());
            span.setAttribute(TraceAttributes.TOKENS_OUT, (long) usage.completionTokens());
        }
    }

    /**
     * The attempt's message failed {@code failures} deliveries and goes to the dead-letter queue:
     * settles the attempt and its job with the reason, so nothing waits for a message nobody
     * consumes (docs/design.md, rule 14).
     */
    public void deadLettered(UUID attemptId, int failures, Throwable lastFailure) {
        String why = "its message failed " + failures + " deliveries and was dead-lettered (last: "
                + describe(lastFailure) + ")";
        steps.run(attemptId, null, step -> {
            outcomes.deadLettered(step, why);
            return null;
        });
    }
}
