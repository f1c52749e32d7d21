package dev.jobapi.client.model;

import java.time.Instant;
import java.util.UUID;

/** One delivery of the endpoint's delivery log: its webhook-id, the same on every try, and how the tries went. */
public record WebhookDelivery(
        String webhookId,
        String type,
        UUID jobId,
        Long eventId,
        String state,
        int attempts,
        Instant createdAt,
        Instant lastAttemptAt,
        Integer lastStatus,
        String lastError,
        Instant nextAttemptAt,
        Instant deliveredAt) {}
