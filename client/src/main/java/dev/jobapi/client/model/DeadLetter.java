package dev.jobapi.client.model;

import java.time.Instant;
import java.util.UUID;

/** A dead letter (a row the api's mover stored) as GET /admin/dlq shows it. */
public record DeadLetter(
        String id,
        UUID attemptId,
        UUID jobId,
        String ownerId,
        String provider,
        String body,
        String reason,
        long deathCount,
        Long deliveryCount,
        Instant firstDeathAt,
        Instant lastDeathAt,
        Instant deadLetteredAt,
        String state,
        Instant settledAt,
        String settledBy,
        String settleReason) {}
