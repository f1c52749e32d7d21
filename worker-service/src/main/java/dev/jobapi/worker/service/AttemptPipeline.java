package dev.jobapi.worker.service;

import dev.jobapi.common.message.AttemptMessage;
import dev.jobapi.common.tracing.TraceAttributes;
import dev.jobapi.common.tracing.Tracing;
import dev.jobapi.worker.apply.ApplyRefused;
import dev.jobapi.worker.provider.InFlightCaps;
import dev.jobapi.worker.provider.ProviderGate;
import dev.jobapi.worker.provider.ProviderOutcome;
import dev.jobapi.worker.provider.ProviderRegistry;
import dev.jobapi.worker.service.ClaimStep.Decision;
import dev.jobapi.worker.service.RecordStep.Origin;
import io.opentelemetry.api.trace.Span;
import jakarta.inject.Singleton;
import java.util.Locale;
import java.util.Optional;
import java.util.UUID;
import org.jboss.logging.Logger;

/**
 * What the worker does with one attempt message, and every transaction it opens, in order: each
 * {@code steps.run} below is one committed transaction ({@link AttemptSteps}), so a redelivery at any
 * point resumes where the last commit stopped. The step classes are functions of the loaded attempt
 * and open none; only this class and the sweep ({@link Reconciler}, which resumes through the
 * public methods here) do.
 *
 * <ol>
 *   <li>claim ({@link ClaimStep}): decide what the message is for; claim a free attempt under a
 *       lease, with the provider request;
 *   <li>call the provider once, outside any transaction;
 *   <li>record the answer ({@link RecordStep}), elect the winner ({@link ElectionStep}) and reserve
 *       its apply ({@link ApplyStep#reserve}) in one step; an apply to the database commits here too;
 *       should that step not commit at all, a step of its own stores the paid answer alone;
 *   <li>apply on the target (git), outside any transaction;
 *   <li>mark it applied and complete the job; or, when the target refused it for good, release the
 *       win; or, when the target could not take it now, put the apply back for the sweep.
 * </ol>
 *
 * A stored answer waiting for its election, a winner waiting for its apply and a lost answer start
 * at step 3 or 4 ({@link #electAndApply}, {@link #resumeApply}, {@link #reconcile}).
 *
 * <p>Each step is a span of the delivery's trace (docs/trace-example.md): {@value #CLAIM_SPAN},
 * {@value #PROVIDER_SPAN}, {@code attempt.record}, {@code attempt.elect} and {@value
 * ApplyStep#APPLY_SPAN}.
 */
@Singleton
public class AttemptPipeline {

    private static final Logger LOG = Logger.getLogger(AttemptPipeline.class);

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
    private final ProviderGate gate;
    private final InFlightCaps caps;
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
            ProviderGate gate,
            InFlightCaps caps,
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
        this.gate = gate;
        this.caps = caps;
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
                // Before the record: a probe whose attempt ended uncounted looks abandoned to the gate's
                // round, which would free it for a sixth probe of five.
                countForHealth(request.provider(), attemptId, outcome, decision.probe());
                applyOnTarget(attemptId, recordAndElect(attemptId, outcome, Origin.CALL));
            }
            case ELECT -> electAndApply(attemptId);
            case APPLY -> resumeApply(attemptId);
            case RECONCILE -> reconcile(attemptId);
        }
        return Disposition.DONE;
    }

    /**
     * Records an answer, elects and reserves the apply in one step; the plan is what to apply. A
     * call's answer is paid for and in hand only once: a step that cannot commit at all is followed
     * by one that stores the generation and usage alone (rule 4), for the sweep to elect. A lookup's
     * answer the provider still keeps, for a later round.
     */
    private ApplyStep.Plan recordAndElect(UUID attemptId, ProviderOutcome outcome, Origin origin) {
        ApplyStep.Plan plan;
        try {
            plan = steps.run(
                    attemptId,
                    null,
                    step -> record.record(step, outcome, origin) && election.elect(step) ? apply.reserve(step) : null);
        } catch (RuntimeException e) {
            if (origin == Origin.CALL && outcome instanceof ProviderOutcome.Completed completed) {
                LOG.warnf(
                        "Recording attempt %s's answer failed (%s); storing its generation and usage alone",
                        attemptId, e.toString());
                steps.run(attemptId, null, step -> record.storeAlone(step, completed));
            }
            throw e;
        }
        return plan;
    }

    /**
     * Counts the call for its provider's health gate (rule 21), in a transaction of its own, once its
     * answer is recorded and before it is applied, and gives a capped provider's freed slot to a held attempt. Advice only: a
     * count the database refuses is lost, nothing else.
     */
    private void countForHealth(String provider, UUID attemptId, ProviderOutcome outcome, boolean probe) {
        try {
            if (outcome instanceof ProviderOutcome.Held) {
                // The provider answered and asked to wait: its announced limit holds the calls. A probe
                // it held is freed by the gate's round when the limit ends (the attempt is not in flight).
                return;
            }
            gate.ended(provider, attemptId, outcome.fault(), probe);
            caps.callEnded(provider);
        } catch (RuntimeException notCounted) {
            LOG.warnf("Provider %s's call for attempt %s was not counted: %s", provider, attemptId, notCounted);
        }
    }

    /** Elects a stored answer in one step with the winner's apply reservation, then applies it. */
    public void electAndApply(UUID attemptId) {
        applyOnTarget(attemptId, steps.run(attemptId, null, step -> election.elect(step) ? apply.reserve(step) : null));
    }

    /**
     * Applies an elected winner whose apply a crash stopped with no message left to redeliver, or
     * that the target could not take before.
     */
    public void resumeApply(UUID attemptId) {
        ApplyStep.Plan plan;
        try {
            plan = steps.run(attemptId, null, apply::reserve);
        } catch (RuntimeException notNow) {
            steps.run(attemptId, null, step -> apply.defer(step, notNow));
            return;
        }
        applyOnTarget(attemptId, plan);
    }

    /**
     * Reconciles an attempt whose answer was lost (rule 5): one step reads whom to ask and the
     * provider's callback, the provider is asked outside any transaction, and a found answer is
     * recorded, elected and applied like a call's.
     *
     * @return true when an answer was found and recorded
     */
    public boolean reconcile(UUID attemptId) {
        Reconciliation.Question question = steps.run(attemptId, null, reconciliation::question);
        if (question == null) {
            return false;
        }
        Optional<ProviderOutcome> found = reconciliation.answer(question);
        if (found.isEmpty()) {
            return false;
        }
        applyOnTarget(attemptId, recordAndElect(attemptId, found.get(), Origin.LOOKUP));
        return true;
    }

    /**
     * Outside any transaction, makes a reserved apply on its target; then one step marks it applied
     * and completes the job, or releases the win the target refused, or puts the apply back.
     */
    private void applyOnTarget(UUID attemptId, ApplyStep.Plan plan) {
        if (plan == null) {
            return;
        }
        tracing.runInSpan(ApplyStep.APPLY_SPAN, plan.target().jobId(), attemptId, () -> {
            ApplyStep.describe(Span.current(), plan.key(), plan.scope());
            ApplyStep.Made made;
            try {
                made = apply.make(plan);
            } catch (ApplyRefused refused) {
                steps.run(attemptId, null, step -> apply.refuse(step, plan.key(), refused.getMessage()));
                return;
            } catch (RuntimeException notNow) {
                steps.run(attemptId, null, step -> apply.defer(step, notNow));
                return;
            }
            steps.run(attemptId, null, step -> apply.finish(step, plan, made));
        });
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
        } else if (outcome instanceof ProviderOutcome.Held) {
            span.setAttribute(TraceAttributes.OUTCOME, "held");
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
