package dev.jobapi.worker.service;

import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.attempt.AttemptRepository;
import dev.jobapi.common.message.OutboxWriter;
import dev.jobapi.common.tracing.TraceParent;
import dev.jobapi.common.tracing.Tracing;
import io.quarkus.narayana.jta.QuarkusTransaction;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * The reconciler's steps as spans: a round belongs to no request, so each step of one attempt
 * (a lease declared lost, a stored result elected, an announcement, a lost answer looked up) is a
 * span of its own, linked to the trace of the request that made the attempt, so a trace backend
 * shows what became of that request later. The attempt's trace and job are read only while tracing
 * is on; otherwise the step just runs.
 */
@ApplicationScoped
public class RecoverySpans {

    private final Tracing tracing;
    private final OutboxWriter outbox;
    private final AttemptRepository attempts;

    RecoverySpans(Tracing tracing, OutboxWriter outbox, AttemptRepository attempts) {
        this.tracing = tracing;
        this.outbox = outbox;
        this.attempts = attempts;
    }

    /** The attempt's job and the trace of the request that made it. */
    private record Origin(UUID jobId, TraceParent trace) {}

    public <T> T run(String step, UUID attemptId, Supplier<T> work) {
        if (!tracing.enabled()) {
            return work.get();
        }
        Origin origin = QuarkusTransaction.requiringNew()
                .call(() -> new Origin(
                        attempts.findByIdOptional(attemptId).map(Attempt::jobId).orElse(null),
                        outbox.traceOf(attemptId)));
        return tracing.inLinkedSpan("recovery " + step, origin.jobId(), attemptId, origin.trace(), span -> work.get());
    }
}
