package dev.jobapi.client.model;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * The Job representation (GET /jobs/{id}). {@code actions} is what the caller may do now, computed by
 * the server from state and role; {@code version} grows with every change.
 */
public record Job(
        UUID id,
        JobState state,
        String idempotencyKey,
        String inputDigest,
        JsonNode input,
        String provider,
        List<String> fallback,
        UUID winningAttemptId,
        long version,
        String reviewReason,
        Instant createdAt,
        Instant updatedAt,
        List<Attempt> attempts,
        List<String> actions) {

    /** The newest attempt, or null for a job without one. */
    public Attempt latestAttempt() {
        return attempts == null || attempts.isEmpty() ? null : attempts.get(attempts.size() - 1);
    }
}
