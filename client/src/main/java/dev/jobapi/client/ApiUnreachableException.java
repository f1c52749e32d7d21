package dev.jobapi.client;

/**
 * No definitive answer came back: the connection failed or the API kept answering 5xx until retries
 * ran out. The request may or may not have taken effect; for a create, calling it again with the same
 * intention (or {@link #idempotencyKey()}) replays it safely.
 */
public class ApiUnreachableException extends RuntimeException {

    private final String idempotencyKey;

    ApiUnreachableException(String message, String idempotencyKey, Throwable cause) {
        super(message, cause);
        this.idempotencyKey = idempotencyKey;
    }

    /** The key the request was sent with; null for a request that has none. */
    public String idempotencyKey() {
        return idempotencyKey;
    }
}
