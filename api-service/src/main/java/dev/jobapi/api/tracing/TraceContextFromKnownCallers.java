package dev.jobapi.api.tracing;

import dev.jobapi.api.security.BearerTokens;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.quarkus.opentelemetry.runtime.propagation.TextMapPropagatorCustomizer;
import jakarta.inject.Singleton;

/**
 * Takes an HTTP request's trace context ({@code traceparent}, {@code tracestate}, baggage) only from
 * a caller whose bearer token is ours. The context is read when the request arrives, before any
 * filter or authentication runs; without this, anyone could make our server span, and through the
 * outbox row the relay's and the worker's, children of a trace of their choosing, and force its
 * sampling. A request without a known token (a callback, whose signature needs the body; a bad or
 * missing token) starts a trace of its own. An authenticated caller's context is kept: its traces
 * then show our work inside its own, which is what a client's tracing is for, and its sampled flag
 * costs no more than the requests its rate limits already allow.
 *
 * <p>Only carriers that are HTTP requests are judged; the relay's and the worker's contexts, read
 * from rows and messages we wrote ourselves, pass through unchanged.
 */
@Singleton
class TraceContextFromKnownCallers implements TextMapPropagatorCustomizer {

    private final BearerTokens tokens;

    TraceContextFromKnownCallers(BearerTokens tokens) {
        this.tokens = tokens;
    }

    @Override
    public TextMapPropagator customize(Context context) {
        return new KnownCallerPropagator(context.propagator(), tokens);
    }
}
