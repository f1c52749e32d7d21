package dev.jobapi.api.rest;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.security.Caller;
import dev.jobapi.api.security.CurrentCaller;
import dev.jobapi.api.stream.EventCursor;
import dev.jobapi.api.stream.FeedEvent;
import dev.jobapi.api.stream.TimelineReads;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import java.sql.SQLException;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;

/**
 * The caller's events feed: the events of all their jobs, in the order a cursor can follow without
 * ever skipping one (docs/design.md "Push"), for catching up after a stream or a webhook missed
 * something.
 */
@Path("/events")
@RolesAllowed({Caller.USER, Caller.REVIEWER, Caller.OPERATOR})
@Produces(MediaType.APPLICATION_JSON)
public class EventResource {

    static final int FEED_PAGE = 500;
    static final int MAX_FEED_PAGE = 1000;

    /** One page of the feed: its events, and the cursor to ask with next (the same when there were none). */
    @Schema(name = "EventPage")
    public record EventPage(
            List<FeedEvent> events,
            @Schema(description = "Pass as after= for the events after this page", pattern = EventCursor.PATTERN)
                    String next) {}

    private final CurrentCaller currentCaller;
    private final TimelineReads reads;

    EventResource(CurrentCaller currentCaller, TimelineReads reads) {
        this.currentCaller = currentCaller;
        this.reads = reads;
    }

    @Operation(
            operationId = "listEvents",
            summary = "Your jobs' events after a cursor, in an order that never changes once read; events are kept as"
                    + " long as their job")
    @APIResponse(responseCode = "200", description = "Up to limit events after the cursor, and the next cursor")
    @APIResponse(responseCode = "400", description = "invalid-query (after is not a cursor, limit out of range)")
    @GET
    public EventPage list(
            @Parameter(
                            description =
                                    "A cursor from an earlier page's next or an event's cursor; absent: from the first event",
                            schema = @Schema(type = SchemaType.STRING, pattern = EventCursor.PATTERN))
                    @QueryParam("after")
                    String afterValue,
            @Parameter(description = "Events at most (default 500)", schema = @Schema(minimum = "1", maximum = "1000"))
                    @QueryParam("limit")
                    String limitValue) {
        Caller caller = currentCaller.get();
        EventCursor after = EventCursor.parse("after", afterValue);
        int limit = (int) QueryValues.whole("limit", limitValue, FEED_PAGE, 1, MAX_FEED_PAGE);
        try {
            List<FeedEvent> events = reads.ofOwner(caller.subject(), after, limit);
            String next = events.isEmpty()
                    ? after.toString()
                    : events.get(events.size() - 1).cursor();
            return new EventPage(events, next);
        } catch (SQLException databaseAway) {
            throw new ProblemException(Problem.SERVER_BUSY, "The events could not be read now; retry shortly.");
        }
    }
}
