package dev.jobapi.fakeprovider;

/**
 * One scripted answer of the fake provider: the status, a delay before the first byte, a broken stream, missing usage,
 * a particular patch, or a signed callback with the answer.
 *
 * <p>Missing fields take the defaults of a healthy provider: status 200, no delay, a complete answer with usage, the
 * demo repository's patch and no callback. {@code abortAfterFirstToken}, {@code omitUsage} and {@code
 * callbackAfterMs} only matter for status 200. The same steps drive every API the fake speaks.
 *
 * @param callbackAfterMs when set, this long after the request arrived the fake also POSTs the completion it answers
 *     to the configured callback URL (see {@link FakeProvider#configureCallbacks}); a broken answer ({@code
 *     abortAfterFirstToken}) completes nothing and sends none
 */
public record Step(
        Integer status,
        long delayMs,
        boolean abortAfterFirstToken,
        boolean omitUsage,
        String patch,
        Long callbackAfterMs) {

    private static final int OK = 200;

    public Step {
        status = status == null ? OK : status;
        // Other 1xx-3xx codes carry no OpenAI error body and would only confuse the client under test.
        if (status != OK && (status < 400 || status > 599)) {
            throw new IllegalArgumentException("status must be 200 or an error status 400-599, was " + status);
        }
        if (delayMs < 0) {
            throw new IllegalArgumentException("delayMs must not be negative, was " + delayMs);
        }
        patch = patch == null ? DemoRepository.defaultPatch() : patch;
        if (callbackAfterMs != null && callbackAfterMs < 0) {
            throw new IllegalArgumentException("callbackAfterMs must not be negative, was " + callbackAfterMs);
        }
    }

    /** A step without a callback, as scripts were written before callbacks existed. */
    public Step(Integer status, long delayMs, boolean abortAfterFirstToken, boolean omitUsage, String patch) {
        this(status, delayMs, abortAfterFirstToken, omitUsage, patch, null);
    }

    /** A healthy answer: 200 with the default patch and usage. */
    public static Step ok() {
        return new Step(null, 0, false, false, null);
    }

    /** An error answer with the given status (429, 5xx, other 4xx). */
    public static Step failing(int status) {
        return new Step(status, 0, false, false, null);
    }

    /** A healthy answer that starts only after {@code delayMs}. */
    public static Step delayed(long delayMs) {
        return new Step(null, delayMs, false, false, null);
    }

    /** A 200 answer whose body breaks after the first token. */
    public static Step abortingAfterFirstToken() {
        return new Step(null, 0, true, false, null);
    }

    /** A complete 200 answer that reports no usage. */
    public static Step withoutUsage() {
        return new Step(null, 0, false, true, null);
    }

    /** A healthy answer carrying {@code patch} instead of the default one. */
    public static Step returning(String patch) {
        return new Step(null, 0, false, false, patch);
    }

    /** This step, also calling back with its completion {@code afterMs} after the request arrives. */
    public Step withCallbackAfter(long afterMs) {
        return new Step(status, delayMs, abortAfterFirstToken, omitUsage, patch, afterMs);
    }

    /** Whether answering this step completes a whole answer that a callback can carry. */
    boolean callsBack() {
        return callbackAfterMs != null && succeeds() && !abortAfterFirstToken;
    }

    boolean succeeds() {
        return status == OK;
    }
}
