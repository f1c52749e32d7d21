package dev.jobapi.client;

import java.util.Arrays;

/**
 * The problem codes the API answers with (the {@code code} member of its RFC 9457 bodies), so a
 * caller can switch on them. {@link #UNRECOGNIZED} stands for a code added after this client, and for
 * an error answered without a problem body.
 */
public enum ProblemCode {
    IDEMPOTENCY_KEY_MISSING("idempotency-key-missing"),
    IDEMPOTENCY_KEY_INVALID("idempotency-key-invalid"),
    INVALID_REQUEST("invalid-request"),
    INVALID_QUERY("invalid-query"),
    NOT_I_JSON("not-i-json"),
    UNAUTHENTICATED("unauthenticated"),
    SIGNATURE_INVALID("signature-invalid"),
    SIGNATURE_EXPIRED("signature-expired"),
    FORBIDDEN("forbidden"),
    JOB_NOT_FOUND("job-not-found"),
    NOT_FOUND("not-found"),
    ATTEMPT_NOT_FOUND("attempt-not-found"),
    METHOD_NOT_ALLOWED("method-not-allowed"),
    NOT_ACCEPTABLE("not-acceptable"),
    REQUEST_TIMEOUT("request-timeout"),
    /** An earlier attempt may still produce a result: only a reviewer's supersession starts another. */
    REVIEW_REQUIRED("review-required"),
    JOB_CLOSED("job-closed"),
    ATTEMPT_LIMIT_REACHED("attempt-limit-reached"),
    FALLBACK_DISABLED("fallback-disabled"),
    NO_OUTPUT("no-output"),
    NOT_QUARANTINED("not-quarantined"),
    /** What a bulk action's dry run counted changed, or its token expired: run the dry run again. */
    BULK_SET_CHANGED("bulk-set-changed"),
    WEBHOOK_EXISTS("webhook-exists"),
    WEBHOOK_LIMIT_REACHED("webhook-limit-reached"),
    WEBHOOK_DISABLED("webhook-disabled"),
    WEBHOOK_DELIVERY_NOT_FAILED("webhook-delivery-not-failed"),
    PAYLOAD_TOO_LARGE("payload-too-large"),
    UNSUPPORTED_MEDIA_TYPE("unsupported-media-type"),
    /** The key was used before with a different body: a new intention needs a new key. */
    IDEMPOTENCY_KEY_REUSED("idempotency-key-reused"),
    UNKNOWN_PROVIDER("unknown-provider"),
    CALLBACK_UNSUPPORTED("callback-unsupported"),
    /** A webhook endpoint on a non-public address, or not https where the deployment requires it. */
    WEBHOOK_DESTINATION_REFUSED("webhook-destination-refused"),
    /** Today's token budget is spent; retrying before tomorrow (UTC) cannot succeed. */
    BUDGET_EXCEEDED("budget-exceeded"),
    /**
     * The owner's money budget for a day or month is full (spent, or reserved by calls under way):
     * not retried by the client; the problem's figures say which period and how much.
     */
    SPEND_BUDGET_EXCEEDED("spend-budget-exceeded"),
    /** Too many requests with a body in flight from one address: retrying shortly can succeed. */
    TOO_MANY_UPLOADS("too-many-uploads"),
    /** The caller holds as many open event streams as it may: retry when one of them closed. */
    TOO_MANY_STREAMS("too-many-streams"),
    URI_TOO_LONG("uri-too-long"),
    HEADERS_TOO_LARGE("headers-too-large"),
    INTERNAL("internal"),
    /** The server is at capacity (database connections, bodies in flight): retry after Retry-After. */
    SERVER_BUSY("server-busy"),
    UNRECOGNIZED("");

    private final String wire;

    ProblemCode(String wire) {
        this.wire = wire;
    }

    /** The code as the API writes it. */
    public String wire() {
        return wire;
    }

    public static ProblemCode of(String wire) {
        if (wire == null || wire.isEmpty()) {
            return UNRECOGNIZED;
        }
        return Arrays.stream(values())
                .filter(c -> c.wire.equals(wire))
                .findFirst()
                .orElse(UNRECOGNIZED);
    }
}
