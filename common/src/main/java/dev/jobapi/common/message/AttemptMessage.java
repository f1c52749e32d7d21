package dev.jobapi.common.message;

import java.util.UUID;

/**
 * The body of a "please work on attempt X" message. It carries ids only; the worker reads state
 * from PostgreSQL, so a duplicate, late or replayed message is harmless.
 */
public record AttemptMessage(UUID attemptId, UUID jobId) {

    /** The message's JSON body; ids only, so no escaping is needed. */
    public String toJson() {
        return "{\"attemptId\":\"" + attemptId + "\",\"jobId\":\"" + jobId + "\"}";
    }
}
