package dev.jobapi.fakeprovider;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One scripted answer of the fake provider: the status, a delay before the first byte, a broken stream, missing usage,
 * a particular patch, a signed callback with the answer, a body that stalls after the headers, or an answer cut off at
 * the output limit.
 *
 * <p>Missing fields take the defaults of a healthy provider: status 200, no delay, a complete answer with usage, the
 * demo repository's patch, no callback, no stall and no truncation. {@code abortAfterFirstToken}, {@code omitUsage},
 * {@code callbackAfterMs} and {@code truncated} only matter for status 200. The same steps drive every API the fake
 * speaks.
 *
 * @param callbackAfterMs when set, this long after the request arrived the fake also POSTs the completion it answers
 *     to the configured callback URL (see {@link FakeProvider#configureCallbacks}); a broken or truncated answer
 *     completes nothing and sends none
 * @param stallMs how long the body stalls once the status line and headers are out: an error body stalls before its
 *     first byte, a stream after its first token, a non-streamed answer after half its bytes. A completion stored by
 *     a stalling step stalls the same way when it is read back, as a provider that hangs on that answer would.
 * @param truncated the answer stops at the output limit: half the patch, ending with {@code finish_reason: "length"}
 *     (chat completions) or {@code stop_reason: "max_tokens"} (messages), with usage for what was generated
 * @param headers response headers the answer carries besides its own, such as a {@code retry-after} or a
 *     provider's rate-limit counts
 */
public record Step(
        Integer status,
        long delayMs,
        boolean abortAfterFirstToken,
        boolean omitUsage,
        String patch,
        Long callbackAfterMs,
        long stallMs,
        boolean truncated,
        Map<String, String> headers) {

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
        if (stallMs < 0) {
            throw new IllegalArgumentException("stallMs must not be negative, was " + stallMs);
        }
        headers = headers == null ? Map.of() : Map.copyOf(headers);
    }

    /** A step with a callback and no stall or truncation, as scripts were written before those existed. */
    public Step(
            Integer status,
            long delayMs,
            boolean abortAfterFirstToken,
            boolean omitUsage,
            String patch,
            Long callbackAfterMs) {
        this(status, delayMs, abortAfterFirstToken, omitUsage, patch, callbackAfterMs, 0, false, null);
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

    /** A 200 answer cut off at the output limit: half the patch, with usage, ending for length. */
    public static Step truncatedAtTheOutputLimit() {
        return new Step(null, 0, false, false, null, null, 0, true, null);
    }

    /** This step, also calling back with its completion {@code afterMs} after the request arrives. */
    public Step withCallbackAfter(long afterMs) {
        return new Step(status, delayMs, abortAfterFirstToken, omitUsage, patch, afterMs, stallMs, truncated, headers);
    }

    /** This step, its body stalling {@code forMs} once the headers are out (see {@code stallMs}). */
    public Step stallingBodyFor(long forMs) {
        return new Step(
                status, delayMs, abortAfterFirstToken, omitUsage, patch, callbackAfterMs, forMs, truncated, headers);
    }

    /** This step, its answer also carrying the header {@code name: value}. */
    public Step withHeader(String name, String value) {
        Map<String, String> more = new HashMap<>(headers);
        more.put(name, value);
        return new Step(
                status, delayMs, abortAfterFirstToken, omitUsage, patch, callbackAfterMs, stallMs, truncated, more);
    }

    /** The text the answer carries: the patch, or its first half (whole lines) when truncated. */
    String output() {
        if (!truncated) {
            return patch;
        }
        List<String> pieces = EventStreams.pieces(patch);
        return String.join("", pieces.subList(0, Math.max(1, pieces.size() / 2)));
    }

    /** Whether answering this step completes a whole answer that a callback can carry. */
    boolean callsBack() {
        return callbackAfterMs != null && succeeds() && !abortAfterFirstToken && !truncated;
    }

    boolean succeeds() {
        return status == OK;
    }
}
