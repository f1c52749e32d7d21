package dev.jobapi.api.problem;

/**
 * The catalogue of problem types this API answers with (RFC 9457). Each has its HTTP status, a short
 * stable {@code code} clients switch on, and a title a person can read.
 */
public enum Problem {
    IDEMPOTENCY_KEY_MISSING(400, "idempotency-key-missing", "The Idempotency-Key header is required"),
    IDEMPOTENCY_KEY_INVALID(
            400, "idempotency-key-invalid", "The Idempotency-Key header must be 1-255 printable ASCII characters"),
    INVALID_REQUEST(400, "invalid-request", "The request body is not valid"),
    INVALID_QUERY(400, "invalid-query", "A query parameter is not valid"),
    NOT_I_JSON(
            400,
            "not-i-json",
            "The body is JSON but not I-JSON (RFC 7493): a number a double would change, or a lone surrogate"),
    UNAUTHENTICATED(401, "unauthenticated", "A valid bearer token is required"),
    SIGNATURE_INVALID(401, "signature-invalid", "The callback's Jobapi-Signature is missing or does not verify"),
    SIGNATURE_EXPIRED(401, "signature-expired", "The callback was signed outside the accepted time window"),
    FORBIDDEN(403, "forbidden", "Your role does not allow this"),
    JOB_NOT_FOUND(404, "job-not-found", "No such job"),
    NOT_FOUND(404, "not-found", "No such resource"),
    ATTEMPT_NOT_FOUND(404, "attempt-not-found", "No such attempt of this provider"),
    METHOD_NOT_ALLOWED(405, "method-not-allowed", "This method is not allowed on this resource"),
    NOT_ACCEPTABLE(406, "not-acceptable", "The requested representation is not available"),
    REQUEST_TIMEOUT(408, "request-timeout", "The request body did not arrive in time"),
    REVIEW_REQUIRED(409, "review-required", "An earlier attempt may still produce a result; a reviewer must decide"),
    JOB_CLOSED(409, "job-closed", "The job is closed"),
    ATTEMPT_LIMIT_REACHED(409, "attempt-limit-reached", "The job has as many attempts as a job may have"),
    FALLBACK_DISABLED(409, "fallback-disabled", "New fallback attempts are disabled"),
    NO_OUTPUT(409, "no-output", "The job has no winning output yet"),
    NOT_QUARANTINED(409, "not-quarantined", "The attempt is not held in quarantine"),
    BULK_SET_CHANGED(
            409,
            "bulk-set-changed",
            "What the filter matches changed since the dry run, or its token expired; run the dry run again"),
    WEBHOOK_EXISTS(409, "webhook-exists", "You have a webhook endpoint with this url already"),
    WEBHOOK_LIMIT_REACHED(409, "webhook-limit-reached", "You have as many webhook endpoints as an owner may"),
    WEBHOOK_DISABLED(409, "webhook-disabled", "The webhook endpoint is disabled"),
    WEBHOOK_DELIVERY_NOT_FAILED(409, "webhook-delivery-not-failed", "Only a failed webhook delivery can be retried"),
    PAYLOAD_TOO_LARGE(413, "payload-too-large", "The request body is too large"),
    UNSUPPORTED_MEDIA_TYPE(415, "unsupported-media-type", "The request body must be application/json"),
    IDEMPOTENCY_KEY_REUSED(
            422, "idempotency-key-reused", "This Idempotency-Key was already used with a different request"),
    UNKNOWN_PROVIDER(422, "unknown-provider", "No such provider"),
    CALLBACK_UNSUPPORTED(422, "callback-unsupported", "This callback cannot be used"),
    WEBHOOK_DESTINATION_REFUSED(
            422,
            "webhook-destination-refused",
            "Webhooks are not sent there: a non-public address, or not https where https is required"),
    BUDGET_EXCEEDED(429, "budget-exceeded", "Today's token budget is spent"),
    SPEND_BUDGET_EXCEEDED(
            429, "spend-budget-exceeded", "The money budget for the period is full: spent, or held by calls under way"),
    TOO_MANY_UPLOADS(429, "too-many-uploads", "Too many requests with a body from your address at once"),
    TOO_MANY_STREAMS(429, "too-many-streams", "You hold as many open event streams as a caller may"),
    URI_TOO_LONG(414, "uri-too-long", "The request line is too long"),
    HEADERS_TOO_LARGE(431, "headers-too-large", "The request headers are too large"),
    INTERNAL(500, "internal", "Something went wrong on our side"),
    SERVER_BUSY(503, "server-busy", "The server is at capacity; retry after the Retry-After delay");

    /** Seconds a {@link #SERVER_BUSY} (or too-many-uploads, too-many-streams) answer asks the client to wait. */
    public static final int RETRY_AFTER_SECONDS = 2;

    /** Where the pages of the problem types live (rest.ProblemTypeResource serves them). */
    public static final String PAGES_PATH = "/problems";

    private final int status;
    private final String code;
    private final String title;

    Problem(int status, String code, String title) {
        this.status = status;
        this.code = code;
        this.title = title;
    }

    public int status() {
        return status;
    }

    public String code() {
        return code;
    }

    public String title() {
        return title;
    }

    /**
     * Whether the same request, sent again unchanged (the same Idempotency-Key), may get another
     * answer without anyone acting first: the refusal was about the server's load or a moment
     * (a body that came too slowly, a fault of ours, today's budget), never about the request, the
     * caller's rights or the job's state. 429 and 503 answers say when in Retry-After.
     */
    public boolean retryable() {
        return switch (this) {
            case REQUEST_TIMEOUT,
                    BUDGET_EXCEEDED,
                    SPEND_BUDGET_EXCEEDED,
                    TOO_MANY_UPLOADS,
                    TOO_MANY_STREAMS,
                    INTERNAL,
                    SERVER_BUSY -> true;
            default -> false;
        };
    }

    /** The path of this problem's page, under {@link #PAGES_PATH}. */
    public String path() {
        return PAGES_PATH + "/" + code;
    }

    /** The entry with this code, if any. */
    public static java.util.Optional<Problem> ofCode(String code) {
        return java.util.Arrays.stream(values())
                .filter(p -> p.code.equals(code))
                .findFirst();
    }
}
