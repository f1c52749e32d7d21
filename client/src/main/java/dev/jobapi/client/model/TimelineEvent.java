package dev.jobapi.client.model;

import java.time.Instant;
import java.util.UUID;

/** One event of a job's history (GET /jobs/{id}/timeline), in commit order. */
public record TimelineEvent(long id, Instant at, String kind, UUID attemptId, String detail) {}
