package dev.jobapi.api.webhook;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** One of an owner's webhook endpoints, as the API shows it. */
@Schema(name = "WebhookEndpoint")
public record WebhookEndpoint(
        UUID id,
        String url,
        @Schema(description = "The event kinds sent to it, as on the timeline (job.completed, ...)")
                List<String> events,
        @Schema(nullable = true) String description,
        Instant createdAt,
        @Schema(nullable = true, description = "Why nothing is sent to it any more (it answered 410 Gone)")
                String disabledReason,
        @Schema(nullable = true, description = "Until when the secret before the last rotation still signs too")
                Instant previousSecretExpiresAt,
        @JsonInclude(JsonInclude.Include.NON_NULL)
                @Schema(
                        description = "The signing secret (whsec_ and base64): only in the answers of the"
                                + " registration and of a rotation; keep it, it is not shown again",
                        pattern = "^whsec_[A-Za-z0-9+/]+={0,2}$")
                String secret) {

    WebhookEndpoint withSecret(String shown) {
        return new WebhookEndpoint(
                id, url, events, description, createdAt, disabledReason, previousSecretExpiresAt, shown);
    }
}
