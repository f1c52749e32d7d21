package dev.jobapi.api.webhook;

import java.time.Instant;
import java.util.UUID;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** One delivery of an event to an endpoint, and how its tries went: an entry of the delivery log. */
@Schema(name = "WebhookDelivery")
public record WebhookDelivery(
        @Schema(
                        description = "The webhook-id header: the same on every try of this delivery",
                        pattern = "^msg_[0-9a-f]{32}$")
                String webhookId,
        @Schema(description = "The event's kind (job.completed, ...), or webhook.test") String type,
        @Schema(nullable = true) UUID jobId,
        @Schema(nullable = true, description = "The event's id on the job's timeline") Long eventId,
        @Schema(enumeration = {"pending", "delivered", "failed"}) String state,
        @Schema(description = "Tries so far") int attempts,
        Instant createdAt,
        @Schema(nullable = true) Instant lastAttemptAt,
        @Schema(nullable = true, description = "The HTTP status of the last try, when it was answered")
                Integer lastStatus,
        @Schema(nullable = true, description = "Why the last try did not deliver") String lastError,
        @Schema(nullable = true, description = "When the next try is due, while pending") Instant nextAttemptAt,
        @Schema(nullable = true) Instant deliveredAt) {}
