package dev.jobapi.api.service;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.attempt.AttemptRepository;
import dev.jobapi.common.callback.CallbackInbox;
import dev.jobapi.common.callback.ProviderCallback;
import dev.jobapi.common.job.JobEventKind;
import dev.jobapi.common.job.JobEvents;
import dev.jobapi.common.message.OutboxWriter;
import dev.jobapi.common.tracing.Tracing;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.transaction.Transactional;
import java.time.Clock;

/**
 * Takes in a verified provider callback (docs/design.md, rule 5): stores it in the inbox and
 * announces its attempt through the outbox, so a worker reconciles the attempt from it at once, by
 * the same path as a lookup at the provider. Nothing is decided here.
 *
 * <p>The callback arrives in a trace of its own (the provider's request); its span links to the
 * trace of the request that made the attempt, found in the attempt's outbox row, and the worker's
 * reconciliation continues the callback's trace.
 */
@ApplicationScoped
public class CallbackIntake {

    private final AttemptRepository attempts;
    private final CallbackInbox callbacks;
    private final OutboxWriter outbox;
    private final JobEvents events;
    private final Clock clock;
    private final Tracing tracing;

    CallbackIntake(
            AttemptRepository attempts,
            CallbackInbox callbacks,
            OutboxWriter outbox,
            JobEvents events,
            Clock clock,
            Tracing tracing) {
        this.tracing = tracing;
        this.attempts = attempts;
        this.callbacks = callbacks;
        this.outbox = outbox;
        this.events = events;
        this.clock = clock;
    }

    /**
     * @return true when stored; false when this attempt's callback was stored before (a provider
     *     retry), which changes nothing
     */
    @Transactional
    public boolean accept(ProviderCallback callback) {
        Attempt attempt = attempts.findByIdOptional(callback.attemptId())
                .filter(a -> a.provider().equals(callback.provider()))
                .orElseThrow(() -> new ProblemException(
                        Problem.ATTEMPT_NOT_FOUND,
                        "Provider '" + callback.provider() + "' has no attempt " + callback.attemptId() + "."));
        return tracing.inLinkedSpan(
                "callback.accept", attempt.jobId(), attempt.id(), outbox.traceOf(attempt.id()), span -> {
                    if (!callbacks.store(callback, clock.instant())) {
                        return false;
                    }
                    outbox.announce(attempt);
                    events.record(
                            attempt.jobId(),
                            attempt.id(),
                            JobEventKind.CALLBACK_RECEIVED,
                            "signed " + callback.signedAt() + ", remote id " + callback.remoteId()
                                    + (callback.promptTokens() == null ? ", no usage reported" : ""));
                    return true;
                });
    }
}
