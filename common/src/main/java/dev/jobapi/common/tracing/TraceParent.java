package dev.jobapi.common.tracing;

/**
 * A span's W3C trace context as text (https://www.w3.org/TR/trace-context/): what an outbox row keeps
 * in its {@code traceparent} and {@code tracestate} columns. Both are null when nothing was traced.
 */
public record TraceParent(String traceparent, String tracestate) {

    /** No trace: tracing is off, or the row was written outside any span. */
    public static final TraceParent NONE = new TraceParent(null, null);

    public boolean isPresent() {
        return traceparent != null;
    }
}
