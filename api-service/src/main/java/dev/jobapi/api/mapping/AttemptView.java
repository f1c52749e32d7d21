package dev.jobapi.api.mapping;

import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.attempt.AttemptState;
import dev.jobapi.common.attempt.UsageRecord;
import dev.jobapi.common.attempt.UsageSource;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.UUID;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/**
 * The Attempt representation of docs/api.md#representations. A quarantined attempt is shown as it
 * was before quarantine became a state of its own: {@code unknown} with {@code quarantined: true}.
 * To a client it is an attempt whose outcome it cannot count on yet, which is what unknown says;
 * keeping the wire as it was spares every client a sixth state.
 */
public record AttemptView(
        UUID id,
        UUID jobId,
        String provider,
        @Schema(enumeration = {"starting", "succeeded", "failed", "unknown", "superseded"}) AttemptState state,
        @Schema(nullable = true) String remoteId,
        @Schema(nullable = true) String outputDigest,
        @Schema(nullable = true) String reason,
        @Schema(nullable = true) String reviewedBy,
        boolean quarantined,
        @Schema(nullable = true) UsageView usage,
        @Schema(
                        nullable = true,
                        description = "US dollars reserved at the claim in the owner's budgets (the most the call"
                                + " could cost); null when no budget applied")
                BigDecimal reservedUsd,
        @Schema(
                        nullable = true,
                        description = "US dollars the reported usage cost at the price in force at the claim; null"
                                + " before usage is reported or when no price was set")
                BigDecimal costUsd,
        Instant createdAt,
        Instant updatedAt) {

    /** Tokens the provider reported for this attempt, or null before it reached the provider. */
    public record UsageView(Integer promptTokens, Integer completionTokens, UsageSource source) {}

    public static AttemptView of(Attempt a, UsageRecord usage) {
        UsageView usageView =
                usage == null ? null : new UsageView(usage.promptTokens(), usage.completionTokens(), usage.source());
        return new AttemptView(
                a.id(),
                a.jobId(),
                a.provider(),
                a.state() == AttemptState.QUARANTINED ? AttemptState.UNKNOWN : a.state(),
                a.remoteId(),
                a.outputDigest(),
                a.reason(),
                a.reviewedBy(),
                a.state() == AttemptState.QUARANTINED,
                usageView,
                a.reservedUsd(),
                a.costUsd(),
                a.createdAt(),
                a.updatedAt());
    }
}
