package dev.jobapi.worker.service;

import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.attempt.AttemptState;
import dev.jobapi.common.job.JobEventKind;
import dev.jobapi.common.job.JobEvents;
import dev.jobapi.common.tracing.TraceAttributes;
import dev.jobapi.common.tracing.Tracing;
import dev.jobapi.worker.config.WorkerConfig;
import dev.jobapi.worker.fallback.AutomaticFallback;
import dev.jobapi.worker.provider.ProviderOutcome;
import dev.jobapi.worker.repository.AttemptWork;
import dev.jobapi.worker.service.AttemptSteps.Loaded;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

/**
 * The one way an answer is recorded, whether the attempt's own provider call brought it or a
 * reconciliation found it after it was lost (rule 5): output and usage are kept whatever happened
 * to the attempt meanwhile (no silent spend); only an attempt still waiting for the answer changes
 * state. A function of the loaded attempt: {@link AttemptPipeline} runs it in its step.
 */
@Singleton
public class RecordStep {

    private static final Logger LOG = Logger.getLogger(RecordStep.class);

    static final String RECORD_SPAN = "attempt.record";

    /** Where the answer came from. */
    enum Origin {
        /** The attempt's one provider call. */
        CALL,
        /** A reconciliation: the provider's stored answer (poll) or its signed callback. */
        LOOKUP
    }

    private final AttemptOutcomes outcomes;
    private final AutomaticFallback fallback;
    private final JobEvents events;
    private final Tracing tracing;
    private final AttemptWork work;
    private final String workerId;

    RecordStep(
            AttemptOutcomes outcomes,
            AutomaticFallback fallback,
            JobEvents events,
            Tracing tracing,
            AttemptWork work,
            WorkerConfig config) {
        this.work = work;
        this.workerId = config.worker().idOrPid();
        this.outcomes = outcomes;
        this.fallback = fallback;
        this.events = events;
        this.tracing = tracing;
    }

    /**
     * Records the answer.
     *
     * @return true when a usable result is stored and the attempt goes on to the election
     */
    boolean record(Loaded step, ProviderOutcome outcome, Origin origin) {
        return tracing.inSpan(RECORD_SPAN, step.job().id(), step.attempt().id(), span -> {
            boolean toElection = recordAnswer(step, outcome, origin);
            span.setAttribute(
                    TraceAttributes.OUTCOME,
                    toElection ? "to_election" : step.attempt().state().wireName());
            // The cost is the settlement trigger's: read back only for a span that is kept.
            if (span.isRecording()) {
                work.cost(step.attempt().id())
                        .ifPresent(cost -> span.setAttribute(TraceAttributes.COST_USD, cost.doubleValue()));
            }
            return toElection;
        });
    }

    private boolean recordAnswer(Loaded step, ProviderOutcome outcome, Origin origin) {
        Attempt attempt = step.attempt();
        if (origin == Origin.LOOKUP && work.usageSource(attempt.id()).isPresent()) {
            return false; // reconciled already, by another worker or an earlier round
        }
        // A call's answer is awaited while its attempt is starting, or unknown (its lease was lost while
        // the call still ran); a lookup's only while unknown (superseded or held meanwhile: recorded,
        // never applied).
        boolean awaited =
                origin == Origin.CALL ? attempt.state().awaitsResult() : attempt.state() == AttemptState.UNKNOWN;
        if (awaited && outcome.remoteId() != null) {
            attempt.recordRemoteId(outcome.remoteId(), step.now());
        }
        if (outcome instanceof ProviderOutcome.Completed completed) {
            String digest = storeAnswer(step, completed, origin);
            if (!awaited) {
                LOG.infof("Attempt %s is %s; its late result is stored, never applied", attempt.id(), attempt.state());
                return false;
            }
            attempt.recordOutput(digest, step.now());
            if (completed.usage() == null) {
                outcomes.quarantineUnpaid(step);
                return false;
            }
            return true;
        }
        if (outcome instanceof ProviderOutcome.Held held) {
            // Declined with a time to come back (rule 21): back to waiting for the provider's gate.
            if (attempt.state() == AttemptState.STARTING && work.unclaim(attempt.id(), workerId, step.now())) {
                events.record(attempt.jobId(), attempt.id(), JobEventKind.ATTEMPT_HELD, held.reason());
            }
            return false;
        }
        if (outcome instanceof ProviderOutcome.Unknown unknown) {
            if (attempt.state() == AttemptState.STARTING) {
                outcomes.unknown(step, unknown.reason());
            }
            return false;
        }
        ProviderOutcome.Failed failed = (ProviderOutcome.Failed) outcome;
        if (origin == Origin.LOOKUP) {
            events.record(
                    attempt.jobId(),
                    attempt.id(),
                    JobEventKind.ATTEMPT_RECONCILED,
                    "provider has " + failed.remoteId() + ": " + failed.reason());
        }
        if (failed.usage() != null || failed.usageUnknown()) {
            outcomes.recordUsage(step, failed.usage());
        }
        // A call's failure settles a starting attempt, a lookup's an unknown one.
        boolean settles = origin == Origin.CALL ? attempt.state() == AttemptState.STARTING : awaited;
        if (settles) {
            // Whether the job waits for its owner reads the job's other attempts: serialize with their failures.
            step.lockJob();
            outcomes.fail(step, failed.reason());
            // A lost answer found failed starts no fallback: the job went to review when its attempt became
            // unknown, and its owner decides.
            if (origin == Origin.LOOKUP
                    || fallback.afterFailure(step.job(), attempt, step.now()).isEmpty()) {
                outcomes.awaitOwnerIfNothingOpen(step);
            }
        }
        return false;
    }

    /**
     * For a call's answer whose record step could not commit at all: stores the generation and the
     * reported usage on their own (rule 4), for the sweep to elect. Both are once per attempt, so a
     * rerun adds nothing.
     */
    Void storeAlone(Loaded step, ProviderOutcome.Completed completed) {
        storeAnswer(step, completed, Origin.CALL);
        return null;
    }

    private String storeAnswer(Loaded step, ProviderOutcome.Completed completed, Origin origin) {
        Attempt attempt = step.attempt();
        String digest = outcomes.storeAnswer(step, completed.patch(), completed.usage());
        // One row for the answer and its usage, written together (issue 33: only rows a person reads).
        events.record(
                attempt.jobId(),
                attempt.id(),
                origin == Origin.CALL ? JobEventKind.GENERATION_STORED : JobEventKind.ATTEMPT_RECONCILED,
                (origin == Origin.CALL
                                ? digest + ", remote id " + completed.remoteId()
                                : "provider has " + completed.remoteId() + ", " + digest)
                        + "; usage " + AttemptOutcomes.describe(completed.usage()));
        return digest;
    }
}
