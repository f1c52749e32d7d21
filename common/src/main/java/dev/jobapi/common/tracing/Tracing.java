package dev.jobapi.common.tracing;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import jakarta.inject.Singleton;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * The spans jobapi makes itself and the trace context it carries where no instrumentation does:
 * into an outbox row (written in one transaction, published later by another thread), into a
 * message's AMQP headers, and out of them in the worker. The context is written and read by the
 * configured propagators (W3C {@code traceparent}/{@code tracestate}, and baggage).
 *
 * <p>With the SDK disabled (the default: {@link TracingNeedsACollector}) everything here is
 * OpenTelemetry's no-op API: no span is recorded, no header or column written, nothing parsed.
 * Quarkus' disabled SDK would still record spans nobody exports; the no-op API does not.
 */
@Singleton
public class Tracing {

    /** The instrumentation scope of jobapi's own spans. */
    static final String SCOPE = "dev.jobapi";

    private static final String TRACEPARENT = "traceparent";
    private static final String TRACESTATE = "tracestate";

    /** A piece of work that runs inside a span and may describe its result on it. */
    @FunctionalInterface
    public interface Work<T> {
        T run(Span span);
    }

    private final Tracer tracer;
    private final TextMapPropagator propagator;
    private final boolean enabled;

    Tracing(OpenTelemetry openTelemetry, @ConfigProperty(name = "quarkus.otel.sdk.disabled") boolean sdkDisabled) {
        this.enabled = !sdkDisabled;
        OpenTelemetry used = sdkDisabled ? OpenTelemetry.noop() : openTelemetry;
        this.tracer = used.getTracer(SCOPE);
        this.propagator = used.getPropagators().getTextMapPropagator();
    }

    /** Whether spans are recorded: callers skip reading a context they would only link to when not. */
    public boolean enabled() {
        return enabled;
    }

    /**
     * Starts a span, child of {@code parent}, naming its job and attempt (either may be null when not
     * known yet: {@link #name}). The caller ends it.
     */
    public Span start(String name, SpanKind kind, Context parent, UUID jobId, UUID attemptId) {
        return name(tracer.spanBuilder(name).setSpanKind(kind).setParent(parent).startSpan(), jobId, attemptId);
    }

    /** Puts the job and attempt ids on a span (those that are known). */
    public static Span name(Span span, UUID jobId, UUID attemptId) {
        if (jobId != null) {
            span.setAttribute(TraceAttributes.JOB_ID, jobId.toString());
        }
        if (attemptId != null) {
            span.setAttribute(TraceAttributes.ATTEMPT_ID, attemptId.toString());
        }
        return span;
    }

    /**
     * Runs {@code work} in a span that is a child of the current one and current while it runs; a
     * failure is recorded on the span (status error) and thrown on.
     */
    public <T> T inSpan(String name, UUID jobId, UUID attemptId, Work<T> work) {
        return run(start(name, SpanKind.INTERNAL, Context.current(), jobId, attemptId), work);
    }

    /** {@link #inSpan} for work that returns nothing. */
    public void runInSpan(String name, UUID jobId, UUID attemptId, Runnable work) {
        inSpan(name, jobId, attemptId, span -> {
            work.run();
            return null;
        });
    }

    /**
     * {@link #inSpan}, with a link to the span that {@code linked} names: work that belongs to
     * another trace (a provider's callback for an attempt a POST started long ago).
     */
    public <T> T inLinkedSpan(String name, UUID jobId, UUID attemptId, TraceParent linked, Work<T> work) {
        SpanBuilder builder = tracer.spanBuilder(name).setParent(Context.current());
        SpanContext other = Span.fromContext(resume(linked)).getSpanContext();
        if (other.isValid()) {
            builder.addLink(other);
        }
        return run(name(builder.startSpan(), jobId, attemptId), work);
    }

    private static <T> T run(Span span, Work<T> work) {
        try (Scope ignored = makeCurrent(span)) {
            return work.run(span);
        } catch (RuntimeException | Error failure) {
            failed(span, failure);
            throw failure;
        } finally {
            span.end();
        }
    }

    /**
     * Makes the span current, unless it names no trace (tracing off and nothing upstream traced):
     * a current context puts its trace id into every log line's MDC, and all zeros say nothing.
     */
    public static Scope makeCurrent(Span span) {
        return span.getSpanContext().isValid() ? span.makeCurrent() : Scope.noop();
    }

    /** Marks a span failed by {@code failure}. */
    public static void failed(Span span, Throwable failure) {
        span.recordException(failure);
        span.setStatus(StatusCode.ERROR, failure.toString());
    }

    /** The current trace context, as an outbox row keeps it. */
    public TraceParent current() {
        Map<String, Object> carrier = headers(Context.current());
        if (!carrier.containsKey(TRACEPARENT)) {
            return TraceParent.NONE;
        }
        return new TraceParent((String) carrier.get(TRACEPARENT), (String) carrier.get(TRACESTATE));
    }

    /** The context that continues a stored trace; the root context when nothing was stored. */
    public Context resume(TraceParent stored) {
        if (stored == null || !stored.isPresent()) {
            return Context.root();
        }
        Map<String, Object> carrier = new HashMap<>();
        carrier.put(TRACEPARENT, stored.traceparent());
        if (stored.tracestate() != null) {
            carrier.put(TRACESTATE, stored.tracestate());
        }
        return fromHeaders(carrier);
    }

    /** The trace headers ({@code traceparent}, ...) of a message published in {@code context}. */
    public Map<String, Object> headers(Context context) {
        Map<String, Object> headers = new HashMap<>();
        propagator.inject(context, headers, Map::put);
        return headers;
    }

    /**
     * The context a received message's headers carry; the root context when they carry none. AMQP
     * header values arrive as the client's {@code LongString}, so each is read as text.
     */
    public Context fromHeaders(Map<String, Object> headers) {
        if (headers == null || headers.isEmpty()) {
            return Context.root();
        }
        return propagator.extract(Context.root(), headers, HEADERS);
    }

    private static final TextMapGetter<Map<String, Object>> HEADERS = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, Object> carrier) {
            return carrier.keySet();
        }

        @Override
        public String get(Map<String, Object> carrier, String key) {
            Object value = carrier == null ? null : carrier.get(key);
            return value == null ? null : value.toString();
        }
    };
}
