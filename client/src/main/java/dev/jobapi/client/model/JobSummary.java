package dev.jobapi.client.model;

import java.time.Instant;
import java.util.UUID;

/** One job in GET /jobs: a preview of the input and its stored size, no attempts. */
public record JobSummary(
        UUID id,
        JobState state,
        String idempotencyKey,
        String inputDigest,
        InputPreview input,
        long inputBytes,
        String provider,
        UUID winningAttemptId,
        long version,
        Instant createdAt,
        Instant updatedAt) {

    /** The start of the input's prompt, repository and baseRef; null where the input has none. */
    public record InputPreview(String prompt, String repository, String baseRef) {}
}
