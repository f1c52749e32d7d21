package dev.jobapi.client.model;

import java.time.Instant;
import java.util.UUID;

/** The Attempt representation: one try of a job at one provider. */
public record Attempt(
        UUID id,
        UUID jobId,
        String provider,
        AttemptState state,
        String remoteId,
        String outputDigest,
        String reason,
        String reviewedBy,
        boolean quarantined,
        Usage usage,
        Instant createdAt,
        Instant updatedAt) {

    /** Tokens the provider reported; {@code source} says whether the provider reported them. */
    public record Usage(Integer promptTokens, Integer completionTokens, String source) {}
}
