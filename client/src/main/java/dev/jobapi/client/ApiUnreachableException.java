package dev.jobapi.client;

/**
 * No definitive answer came back: the connection failed or the API kept answering 5xx until retries
 * ran out. The request may or may not have taken effect; for a create, calling it again with the same
 * intention (or {@link #idempotencyKey()}) replays it safely.
 */
public class ApiUnreachableException extends RuntimeException {

    private final String idempotencyKey;
    private final String requestId;

    ApiUnreachableException(String message, String idempotencyKey, String requestId, Throwable cause) {
        super(requestId == null ? message : message + " (last request " + requestId + ")", cause);
        this.idempotencyKey = idempotencyKey;
        this.requestId = requestId;
    }

    /** The key the request was sent with; null for a request that has none. */
    public String idempotencyKey() {
        return idempotencyKey;
    }

    /**
     * The X-Request-Id of the last try (each try sends an id of its own); null when none was sent.
     * The API's logs have it when the request reached the API.
     */
    public String requestId() {
        return requestId;
    }
}
