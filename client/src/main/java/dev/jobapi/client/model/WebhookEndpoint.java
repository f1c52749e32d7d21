package dev.jobapi.client.model;

import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * One of your webhook endpoints. {@code secret} (whsec_...) is set only in the answers of the
 * registration and of a rotation; {@code disabledReason} once it answered 410 Gone.
 */
public record WebhookEndpoint(
        UUID id,
        String url,
        List<String> events,
        String description,
        Instant createdAt,
        String disabledReason,
        Instant previousSecretExpiresAt,
        String secret) {}
