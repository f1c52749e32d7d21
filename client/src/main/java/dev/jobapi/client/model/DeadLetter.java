package dev.jobapi.client.model;

import java.time.Instant;
import java.util.UUID;

/** A dead-lettered attempt message as GET /admin/dlq shows it. */
public record DeadLetter(
        String id,
        UUID attemptId,
        UUID jobId,
        String body,
        String reason,
        long deathCount,
        Long deliveryCount,
        Instant firstDeathAt,
        Instant lastDeathAt) {}
