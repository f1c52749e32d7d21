package dev.jobapi.api.stream;

import java.time.Instant;
import java.util.UUID;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** One event of the feed or of a job's stream: a job_event row and where it stands in their order. */
@Schema(name = "FeedEvent")
public record FeedEvent(
        @Schema(
                        description = "Where this event stands; pass it back as after= or Last-Event-ID",
                        pattern = EventCursor.PATTERN)
                String cursor,
        UUID jobId,
        @Schema(description = "The event's id on the job's timeline") long id,
        Instant at,
        @Schema(description = "What happened, as on the timeline (job.created, attempt.succeeded, job.completed, ...)")
                String kind,
        @Schema(nullable = true) UUID attemptId,
        @Schema(nullable = true) String detail) {}
