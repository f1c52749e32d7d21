package dev.jobapi.client.model;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.UUID;

/**
 * The Attempt representation: one try of a job at one provider. {@code reservedUsd}: what its claim
 * reserved in the owner's money budgets; {@code costUsd}: its reported usage at the claim's price.
 */
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
        BigDecimal reservedUsd,
        BigDecimal costUsd,
        Instant createdAt,
        Instant updatedAt) {

    /** Tokens the provider reported; {@code source} says whether the provider reported them. */
    public record Usage(Integer promptTokens, Integer completionTokens, String source) {}
}
