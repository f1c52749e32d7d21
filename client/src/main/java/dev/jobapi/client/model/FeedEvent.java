package dev.jobapi.client.model;

import java.time.Instant;
import java.util.UUID;

/**
 * One event of the events feed (GET /events) or of a job's stream (GET /jobs/{id}/events): a
 * timeline event with its job and its cursor, which resumes the feed ({@code after}) or the stream
 * ({@code Last-Event-ID}) right after it.
 */
public record FeedEvent(String cursor, UUID jobId, long id, Instant at, String kind, UUID attemptId, String detail) {}
