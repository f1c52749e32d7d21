package dev.jobapi.api.mapping;

import com.fasterxml.jackson.databind.JsonNode;
import dev.jobapi.common.job.JobState;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/**
 * The Job representation of docs/api.md#representations. {@code actions} is what the caller may do
 * now, computed by the server, so a client draws its buttons from it and keeps no state of its own.
 * {@code fallback} lists the providers automatic fallback may move to, in order. {@code attempts}
 * holds the newest {@link JobViews#ATTEMPTS_SHOWN} attempts; {@code attemptsTotal} counts them all.
 */
public record JobView(
        UUID id,
        JobState state,
        String idempotencyKey,
        String inputDigest,
        JsonNode input,
        String provider,
        List<String> fallback,
        @Schema(nullable = true) UUID winningAttemptId,
        long version,
        @Schema(nullable = true) String reviewReason,
        @Schema(nullable = true, description = "No provider call starts for the job from then on") Instant deadline,
        @Schema(nullable = true, description = "'expired' for a job its deadline ended; null otherwise")
                String cancelReason,
        Instant createdAt,
        Instant updatedAt,
        List<AttemptView> attempts,
        long attemptsTotal,
        List<String> actions) {}
