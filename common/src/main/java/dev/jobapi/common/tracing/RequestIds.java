package dev.jobapi.common.tracing;

import java.util.Optional;
import java.util.UUID;
import java.util.regex.Pattern;
import org.jboss.logging.MDC;

/**
 * The request id a support ticket can name: the api takes it from the client's {@code X-Request-Id}
 * when it is well formed, mints one otherwise, answers it on every response and problem, and keeps it
 * in the logging context ({@link #MDC_KEY}), so every log line of the request carries it. An outbox row
 * keeps the id of the request that wrote it and the message it becomes carries it in a header
 * ({@link #MESSAGE_HEADER}), where the worker puts it back into the logging context of its work.
 */
public final class RequestIds {

    /** The HTTP header, on requests (the client's own id) and on every response. */
    public static final String HTTP_HEADER = "X-Request-Id";

    /** The AMQP message header that carries the id from the outbox to the worker. */
    public static final String MESSAGE_HEADER = "x-request-id";

    /** The logging context's key: a {@code requestId} member of every JSON log line's {@code mdc}. */
    public static final String MDC_KEY = "requestId";

    /**
     * What a client's id may be: 1-128 letters, digits and {@code . _ : -}, so that it is safe in a
     * header, a log line and a URL without escaping. A UUID, a ULID or a trace id all fit.
     */
    public static final String PATTERN = "^[A-Za-z0-9._:-]{1,128}$";

    private static final Pattern WELL_FORMED = Pattern.compile(PATTERN);

    private RequestIds() {}

    /** The client's id when it is well formed, otherwise a new random UUID. */
    public static String takeOrMint(String offered) {
        return offered != null && WELL_FORMED.matcher(offered).matches()
                ? offered
                : UUID.randomUUID().toString();
    }

    /** A header or column value read back: kept only when well formed, so nothing else reaches a log. */
    public static Optional<String> wellFormed(Object value) {
        if (value == null) {
            return Optional.empty();
        }
        String text = value.toString();
        return WELL_FORMED.matcher(text).matches() ? Optional.of(text) : Optional.empty();
    }

    /** The request id of the work on this thread (its logging context), if any. */
    public static Optional<String> current() {
        return wellFormed(MDC.get(MDC_KEY));
    }

    /** Puts the id into this thread's logging context. */
    public static void enter(String requestId) {
        MDC.put(MDC_KEY, requestId);
    }

    /** Takes the id out of this thread's logging context. */
    public static void leave() {
        MDC.remove(MDC_KEY);
    }
}
