package dev.jobapi.chaos;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Random;

/**
 * What the fake provider does to one job's requests: a script of steps for the prompts carrying the
 * job's tag (each request takes the next step, the last repeats). Every script ends healthy, so a
 * fallback or supersession after the fault gets a result.
 */
enum ProviderFault {
    HEALTHY(30),
    /** 5xx before the first token, fewer than three times: the worker's resends get through. */
    TRANSIENT_5XX(14),
    /** 429 twice: resent with backoff, same attempt. */
    RATE_LIMITED(9),
    /** Three 5xx: the attempt fails after three sends; the client asks for a fallback. */
    EXHAUSTED_5XX(8),
    /** The answer comes after the read timeout: unknown attempt, the stored completion is reconciled later. */
    LATE_COMPLETION(10),
    /** Past the read timeout and then a 502: unknown, with nothing at the provider to reconcile. */
    LOST_ANSWER(5),
    /** The stream breaks after the first token: failed, partial output discarded. */
    ABORT_AFTER_FIRST_TOKEN(8),
    /** A complete answer without usage: quarantined, never applied. */
    MISSING_USAGE(6),
    /**
     * A 500 whose body stalls, after the headers, for longer than the worker's lease: the worker cuts
     * it off by its deadline and never resends; unknown after one send, with nothing to reconcile.
     */
    STALLED_BODY(3),
    /** An answer cut off at the output limit: failed with the usage the provider reported, never applied. */
    TRUNCATED_OUTPUT(4),
    /**
     * A complete, paid answer whose patch the target refuses (its context is not in the file): the
     * winner fails with the target's reason and the job waits in review; the client's fallback then
     * completes it.
     */
    UNAPPLIABLE_PATCH(3);

    /** A well-formed diff whose context line is nowhere in the demo repository's file. */
    static final String UNAPPLIABLE_DIFF = "diff --git a/src/counter.py b/src/counter.py\n"
            + "--- a/src/counter.py\n+++ b/src/counter.py\n@@ -1,1 +1,1 @@\n"
            + "-this line is not in the file\n+neither is this one\n";

    /** Longer than the soak's worker lease (six read timeouts), so the stall outlasts any deadline. */
    private static final int STALL_IN_READ_TIMEOUTS = 8;

    private final int weight;

    ProviderFault(int weight) {
        this.weight = weight;
    }

    static ProviderFault pick(Random random) {
        int total = 0;
        for (ProviderFault fault : values()) {
            total += fault.weight;
        }
        int roll = random.nextInt(total);
        for (ProviderFault fault : values()) {
            roll -= fault.weight;
            if (roll < 0) {
                return fault;
            }
        }
        throw new IllegalStateException("weights changed while picking");
    }

    /** The body of POST /fake/scripts for prompts containing {@code match}, or null for no script. */
    ObjectNode script(String match, long readTimeoutMs, Random random) {
        if (this == HEALTHY) {
            return null;
        }
        ObjectNode script = Api.JSON.createObjectNode().put("match", match);
        ArrayNode steps = script.putArray("steps");
        switch (this) {
            case TRANSIENT_5XX -> {
                steps.addObject().put("status", random.nextBoolean() ? 502 : 503);
                if (random.nextBoolean()) {
                    steps.addObject().put("status", 500);
                }
            }
            case RATE_LIMITED -> {
                steps.addObject().put("status", 429);
                steps.addObject().put("status", 429);
            }
            case EXHAUSTED_5XX -> {
                steps.addObject().put("status", 500);
                steps.addObject().put("status", 502);
                steps.addObject().put("status", 503);
            }
            case LATE_COMPLETION -> steps.addObject().put("delayMs", readTimeoutMs + 1_500);
            case LOST_ANSWER -> steps.addObject().put("status", 502).put("delayMs", readTimeoutMs + 1_000);
            case ABORT_AFTER_FIRST_TOKEN -> steps.addObject().put("abortAfterFirstToken", true);
            case MISSING_USAGE -> steps.addObject().put("omitUsage", true);
            case STALLED_BODY -> steps.addObject()
                    .put("status", 500)
                    .put("stallMs", STALL_IN_READ_TIMEOUTS * readTimeoutMs);
            case TRUNCATED_OUTPUT -> steps.addObject().put("truncated", true);
            case UNAPPLIABLE_PATCH -> steps.addObject().put("patch", UNAPPLIABLE_DIFF);
            default -> throw new IllegalStateException("no script for " + this);
        }
        steps.addObject().put("status", 200);
        return script;
    }
}
