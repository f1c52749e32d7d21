package dev.jobapi.fakeprovider;

import com.sun.net.httpserver.HttpExchange;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * The part of answering that every API shares: take the matching script's step (or, during an outage, the
 * outage's failure), log the arrival, schedule the step's callback, and sleep its delay. The API's route then writes the answer in its own wire format.
 */
final class Answering {

    private final Supplier<ProviderState> state;
    private final Clock clock;
    private final Callbacks callbacks;

    /** An outage: every request for {@code model} (null: any) until {@code until} is answered {@code status}. */
    private record Outage(int status, Instant until, String model) {}

    private final AtomicReference<Outage> outage = new AtomicReference<>();

    Answering(Supplier<ProviderState> state, Clock clock, Callbacks callbacks) {
        this.state = state;
        this.clock = clock;
        this.callbacks = callbacks;
    }

    /**
     * What the script decided for one request, in the run it arrived in.
     *
     * @param id the answer's id, chosen on arrival so a callback and the late answer carry the same one
     * @param usage the counts the answer reports, or null when the step omits them
     */
    record Answer(ProviderState run, int slot, Step step, String id, ReceivedRequest.Usage usage) {

        /** Records how the request was answered in its slot of the log. */
        void logAnswered(int status, String remoteId, ReceivedRequest.Usage reported) {
            run.logOutcome(slot, logged -> logged.answered(status, remoteId, reported));
        }
    }

    /**
     * Takes the step for a request and sleeps its delay; null when the delay was interrupted (only {@link
     * FakeProvider#stop()} does that) and there is no one left to answer.
     */
    Answer take(HttpExchange exchange, String model, String prompt, String attemptId, boolean stream, String id) {
        Instant receivedAt = clock.instant();
        // Captured once: a reset during the delay must not move this request's outcome into the next run.
        ProviderState run = state.get();
        // An outage answers every request with its status and leaves the scripts where they were.
        Step scripted = outageAt(receivedAt, model).orElseGet(() -> run.takeStep(model, prompt));
        Step step = scripted == null ? Step.ok() : scripted;
        int slot = run.logArrival(new ReceivedRequest(
                receivedAt.toString(),
                exchange.getRequestURI().getPath(),
                model,
                ReceivedRequest.logged(prompt),
                attemptId,
                exchange.getRequestHeaders().getFirst("Idempotency-Key"),
                stream,
                scripted,
                null,
                null,
                null));
        ReceivedRequest.Usage usage = step.omitUsage() ? null : ReceivedRequest.Usage.count(prompt, step.output());
        if (step.callsBack()) {
            callbacks.schedule(run, receivedAt, step.callbackAfterMs(), model, attemptId, id, step.patch(), usage);
        }
        // The delay comes before the status line, so a client with a shorter read timeout gives up on a request
        // the provider has already taken and will still complete.
        if (!sleep(step.delayMs())) {
            return null;
        }
        step.headers().forEach((name, value) -> exchange.getResponseHeaders().set(name, value));
        return new Answer(run, slot, step, id, usage);
    }

    /**
     * From now on and for {@code length}, every request for {@code model} (null: any model) is answered {@code
     * status}, whatever the scripts say.
     */
    void startOutage(int status, Duration length, String model) {
        outage.set(new Outage(status, clock.instant().plus(length), model));
    }

    void endOutage() {
        outage.set(null);
    }

    private Optional<Step> outageAt(Instant at, String model) {
        Outage current = outage.get();
        return current != null
                        && at.isBefore(current.until())
                        && (current.model() == null || current.model().equals(model))
                ? Optional.of(Step.failing(current.status()))
                : Optional.empty();
    }

    private static boolean sleep(long delayMs) {
        if (delayMs == 0) {
            return true;
        }
        try {
            Thread.sleep(delayMs);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
