package dev.jobapi.worker.service;

import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.attempt.AttemptState;
import dev.jobapi.common.job.JobEventKind;
import dev.jobapi.common.job.JobEvents;
import dev.jobapi.common.tracing.TraceAttributes;
import dev.jobapi.common.tracing.Tracing;
import dev.jobapi.worker.fallback.AutomaticFallback;
import dev.jobapi.worker.provider.ProviderOutcome;
import dev.jobapi.worker.service.AttemptSteps.Loaded;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.UUID;
import org.jboss.logging.Logger;

/**
 * What follows the provider call: one step stores the answer (generation and usage), elects the
 * winner and reserves its apply (for an apply to the database, applies and completes too). The
 * answer is paid for, so it is never dropped with a rolled-back step: a conflict runs the step
 * again with the answer still in hand, and a step that cannot commit at all falls back to storing
 * the generation and usage on their own (rule 4), for the sweep to elect.
 */
@ApplicationScoped
public class RecordStep {

    private static final Logger LOG = Logger.getLogger(RecordStep.class);

    private final AttemptSteps steps;
    private final AttemptOutcomes outcomes;
    private final ElectionStep election;
    private final ApplyStep apply;
    private final AutomaticFallback fallback;
    private final JobEvents events;
    private final Tracing tracing;

    RecordStep(
            AttemptSteps steps,
            AttemptOutcomes outcomes,
            ElectionStep election,
            ApplyStep apply,
            AutomaticFallback fallback,
            JobEvents events,
            Tracing tracing) {
        this.tracing = tracing;
        this.steps = steps;
        this.outcomes = outcomes;
        this.election = election;
        this.apply = apply;
        this.fallback = fallback;
        this.events = events;
    }

    /** Records the provider's answer, elects and applies. */
    void recordElectAndApply(UUID attemptId, ProviderOutcome outcome) {
        ApplyStep.Plan plan;
        try {
            plan = steps.run(
                    attemptId,
                    null,
                    step -> record(step, outcome) && election.elect(step) ? apply.reserve(step) : null);
        } catch (RuntimeException e) {
            if (outcome instanceof ProviderOutcome.Completed completed) {
                LOG.warnf(
                        "Recording attempt %s's answer failed (%s); storing its generation and usage alone",
                        attemptId, e.toString());
                steps.run(attemptId, null, step -> storeAnswer(step, completed));
            }
            throw e;
        }
        apply.finish(attemptId, plan);
    }

    /**
     * Stores what the provider said. Output and usage are kept whatever happened to the attempt in
     * the meantime (no silent spend); only an attempt still waiting for this answer changes state.
     *
     * @return true when a usable result is stored and the attempt goes on to the election
     */
    private boolean record(Loaded step, ProviderOutcome outcome) {
        return tracing.inSpan("attempt.record", step.job().id(), step.attempt().id(), span -> {
            boolean toElection = recordAnswer(step, outcome);
            span.setAttribute(
                    TraceAttributes.OUTCOME,
                    toElection ? "to_election" : step.attempt().state().wireName());
            return toElection;
        });
    }

    private boolean recordAnswer(Loaded step, ProviderOutcome outcome) {
        Attempt attempt = step.attempt();
        boolean starting = attempt.state() == AttemptState.STARTING;
        // An attempt marked unknown while its call was still running (lease lost) takes its result too.
        boolean awaited = attempt.state().awaitsResult();
        if (awaited && outcome.remoteId() != null) {
            attempt.recordRemoteId(outcome.remoteId(), step.now());
        }
        if (outcome instanceof ProviderOutcome.Completed completed) {
            String digest = storeAnswer(step, completed);
            if (!awaited) {
                LOG.infof("Attempt %s is %s; its late result is stored, never applied", attempt.id(), attempt.state());
                return false;
            }
            attempt.recordOutput(digest, step.now());
            if (completed.usage() == null) {
                outcomes.quarantine(step, "provider reported no usage; held until reconciled");
                outcomes.requireReview(step, "usage missing, quarantined");
                return false;
            }
            return true;
        }
        if (outcome instanceof ProviderOutcome.Unknown unknown) {
            if (starting) {
                outcomes.unknown(step, unknown.reason());
            }
            return false;
        }
        ProviderOutcome.Failed failed = (ProviderOutcome.Failed) outcome;
        if (failed.usage() != null || failed.usageUnknown()) {
            outcomes.recordUsage(step, failed.usage());
        }
        if (starting) {
            // Whether to fall back reads the job's other attempts: serialize with their failures.
            step.lockJob();
            outcomes.fail(step, failed.reason());
            if (fallback.afterFailure(step.job(), attempt, step.now()).isEmpty()) {
                outcomes.awaitOwnerIfNothingOpen(step);
            }
        }
        return false;
    }

    /** Stores the generation and the reported usage; both are once per attempt, so a rerun adds nothing. */
    private String storeAnswer(Loaded step, ProviderOutcome.Completed completed) {
        Attempt attempt = step.attempt();
        String digest = outcomes.storeGeneration(step, completed.patch());
        events.record(
                attempt.jobId(),
                attempt.id(),
                JobEventKind.GENERATION_STORED,
                digest + ", remote id " + completed.remoteId());
        outcomes.recordUsage(step, completed.usage());
        return digest;
    }
}
