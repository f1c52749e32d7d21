package dev.jobapi.api.rest;

import com.fasterxml.jackson.databind.JsonNode;
import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.security.Caller;
import dev.jobapi.api.security.CurrentCaller;
import dev.jobapi.api.service.ApiMetrics;
import dev.jobapi.api.service.DeadLetterQueue;
import dev.jobapi.api.service.DeadLetterQueue.Filter;
import dev.jobapi.api.service.DeadLetterQueue.State;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * Dead letters for operators (docs/api.md#operators-role-operator, docs/design.md, rule 13): rows
 * in PostgreSQL that the dead-letter mover made from the broker's dead-letter queue. Listed,
 * counted and filtered by SQL; replayed (through the outbox) or discarded by ids, with a dry run;
 * every action audited in the transaction that makes it. A selection by filter is a bulk action
 * ({@link BulkResource}): its execution needs the dry run's token and is refused when the set changed.
 */
// Every operation answers these; they are declared once for the class.
@APIResponse(responseCode = "401", description = "Missing, expired or foreign token (unauthenticated)")
@APIResponse(responseCode = "403", description = "forbidden (operators only)")
@Tag(name = OpenApiContract.OPERATORS_TAG)
@Path("/admin/dlq")
@RolesAllowed(Caller.OPERATOR)
@Produces(MediaType.APPLICATION_JSON)
public class DeadLetterResource {

    private static final int MAX_PAGE = 500;
    private static final int MAX_IDS = 10_000;
    private static final int MAX_FILTER_TEXT = 200;

    /** Body of POST /admin/dlq/replay and /admin/dlq/discard: the dead letters by id. */
    public record ByIdsRequest(
            @Schema(description = "Dead letters by id (1 to 10,000)", required = true) List<String> ids,
            @Schema(description = "Count and sample what the action would change; change nothing") Boolean dryRun,
            @Schema(description = "Why (audited); required by discard") String reason) {}

    /** One page of dead letters: {@code depth} rows match the filter; {@code next} is the cursor of the next page. */
    public record DeadLetterPage(
            List<DeadLetterQueue.DeadLetter> items,
            long depth,
            int offset,
            int limit,
            @Schema(description = "Pass as 'after' for the next page; null on the last") String next) {}

    /** How many dead letters match the filter. */
    public record DeadLetterCount(long count) {}

    private final CurrentCaller currentCaller;
    private final RequestBodies bodies;
    private final DeadLetterQueue deadLetters;
    private final ApiMetrics metrics;

    DeadLetterResource(
            CurrentCaller currentCaller, RequestBodies bodies, DeadLetterQueue deadLetters, ApiMetrics metrics) {
        this.currentCaller = currentCaller;
        this.bodies = bodies;
        this.deadLetters = deadLetters;
        this.metrics = metrics;
    }

    @Operation(
            operationId = "listDeadLetters",
            summary = "Dead letters, oldest first, filtered; keyset-paged with 'after' (the previous page's 'next')")
    @APIResponse(responseCode = "200", description = "A page of dead letters and how many match")
    @APIResponse(responseCode = "400", description = "invalid-query")
    @GET
    public DeadLetterPage deadLetters(
            @Parameter(description = "The job's owner") @QueryParam("owner") String owner,
            @Parameter(description = "The attempt's provider") @QueryParam("provider") String provider,
            @Parameter(description = "The broker's reason (rejected, delivery_limit, ...)") @QueryParam("reason")
                    String reason,
            @Parameter(description = "Dead-lettered at or after (ISO-8601 instant)") @QueryParam("since") String since,
            @Parameter(description = "Dead-lettered before (ISO-8601 instant)") @QueryParam("until") String until,
            @Parameter(description = "pending (default), replayed, skipped, discarded or all") @QueryParam("state")
                    String state,
            @Parameter(description = "The previous page's 'next'") @QueryParam("after") String afterValue,
            @QueryParam("offset") String offsetValue,
            @QueryParam("limit") String limitValue) {
        Filter filter = filterOf(owner, provider, reason, since, until, state);
        long after = QueryValues.whole("after", afterValue, 0, 0, Long.MAX_VALUE);
        int offset = (int) QueryValues.whole("offset", offsetValue, 0, 0, Integer.MAX_VALUE);
        int limit = (int) QueryValues.whole("limit", limitValue, 50, 1, MAX_PAGE);
        DeadLetterQueue.Page page = deadLetters.page(filter, after, offset, limit);
        return new DeadLetterPage(page.items(), page.total(), offset, limit, page.next());
    }

    @Operation(operationId = "countDeadLetters", summary = "How many dead letters match the filter")
    @APIResponse(responseCode = "200", description = "The count")
    @APIResponse(responseCode = "400", description = "invalid-query")
    @GET
    @Path("count")
    public DeadLetterCount count(
            @QueryParam("owner") String owner,
            @QueryParam("provider") String provider,
            @QueryParam("reason") String reason,
            @QueryParam("since") String since,
            @QueryParam("until") String until,
            @QueryParam("state") String state) {
        return new DeadLetterCount(deadLetters.count(filterOf(owner, provider, reason, since, until, state)));
    }

    @Operation(
            operationId = "replayDeadLetters",
            summary = "Replay dead letters by id (through the outbox, each once); dry run; audited."
                    + " By filter: the bulk action dlq-replay")
    @APIResponse(responseCode = "200", description = "What was (or, for a dry run, would be) replayed and skipped")
    @APIResponse(responseCode = "400", description = "invalid-request (no ids; a filter, which is a bulk action)")
    @RequestBody(
            content =
                    @Content(
                            mediaType = "application/json",
                            schema = @Schema(implementation = ByIdsRequest.class),
                            examples = {
                                @ExampleObject(name = "ids", value = "{\"ids\":[\"17\",\"18\"]}"),
                                @ExampleObject(name = "ids, dry run", value = "{\"ids\":[\"17\"],\"dryRun\":true}")
                            }))
    @POST
    @Path("replay")
    @Consumes(MediaType.APPLICATION_JSON)
    public DeadLetterQueue.BulkResult replay(byte[] body) {
        ByIdsRequest request = byIds(body, "dlq-replay");
        boolean dryRun = Boolean.TRUE.equals(request.dryRun());
        String reason = request.reason() == null ? null : bodies.reason("reason", request.reason());
        DeadLetterQueue.BulkResult result =
                deadLetters.replay(ids(request), dryRun, currentCaller.get().subject(), reason);
        if (!dryRun) {
            metrics.replayed(result.replayed());
        }
        return result;
    }

    @Operation(
            operationId = "discardDeadLetters",
            summary = "Discard dead letters by id, with a reason; dry run; audited. By filter: the bulk action"
                    + " dlq-discard")
    @APIResponse(responseCode = "200", description = "What was (or, for a dry run, would be) discarded")
    @APIResponse(
            responseCode = "400",
            description = "invalid-request (no ids or reason; a filter, which is a bulk action)")
    @RequestBody(
            content =
                    @Content(
                            mediaType = "application/json",
                            schema = @Schema(implementation = ByIdsRequest.class),
                            examples =
                                    @ExampleObject(
                                            name = "ids",
                                            value = "{\"ids\":[\"17\"],\"reason\":\"poison, reported\"}")))
    @POST
    @Path("discard")
    @Consumes(MediaType.APPLICATION_JSON)
    public DeadLetterQueue.BulkResult discard(byte[] body) {
        ByIdsRequest request = byIds(body, "dlq-discard");
        boolean dryRun = Boolean.TRUE.equals(request.dryRun());
        String reason = bodies.reason("reason", request.reason());
        return deadLetters.discard(ids(request), dryRun, currentCaller.get().subject(), reason);
    }

    /**
     * The request, or a 400: a selection by filter (or every dead letter) is a bulk action, whose
     * execution must present its dry run's token and is refused when the set changed since.
     */
    private ByIdsRequest byIds(byte[] body, String bulkAction) {
        JsonNode tree = bodies.tree(body);
        if (tree.has("filter") || tree.has("all")) {
            throw new ProblemException(
                    Problem.INVALID_REQUEST,
                    "Dead letters selected by a filter are a bulk action: POST /admin/bulk/" + bulkAction
                            + "/dry-run with {\"filter\": {...}}, then /admin/bulk/" + bulkAction
                            + "/run with its token. Here, name them: {\"ids\": [...]}.");
        }
        return bodies.bind(tree, ByIdsRequest.class);
    }

    private static List<Long> ids(ByIdsRequest request) {
        if (request.ids() == null || request.ids().isEmpty() || request.ids().size() > MAX_IDS) {
            throw new ProblemException(
                    Problem.INVALID_REQUEST, "'ids' must name from 1 to " + MAX_IDS + " dead letters.");
        }
        List<Long> parsed = new ArrayList<>();
        for (String id : request.ids()) {
            try {
                long value = id == null ? -1 : Long.parseLong(id);
                if (value > 0) {
                    parsed.add(value);
                    continue;
                }
            } catch (NumberFormatException e) {
                // Answered below.
            }
            throw new ProblemException(Problem.INVALID_REQUEST, "Every entry of 'ids' must be a dead letter's id.");
        }
        return parsed;
    }

    /** The query's filter, or a 400 {@code invalid-query} naming the field and its rule. */
    private static Filter filterOf(
            String owner, String provider, String reason, String since, String until, String state) {
        Problem problem = Problem.INVALID_QUERY;
        Instant from = instant("since", since, problem);
        Instant to = instant("until", until, problem);
        if (from != null && to != null && !from.isBefore(to)) {
            throw new ProblemException(problem, "'since' must be before 'until'.");
        }
        State parsed = State.PENDING;
        if (state != null && !state.isEmpty()) {
            try {
                parsed = State.valueOf(state.toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new ProblemException(
                        problem, "'state' must be one of pending, replayed, skipped, discarded, all.");
            }
        }
        return new Filter(
                text("owner", owner, problem),
                text("provider", provider, problem),
                text("reason", reason, problem),
                from,
                to,
                parsed);
    }

    private static String text(String name, String value, Problem problem) {
        if (value == null || value.isEmpty()) {
            return null;
        }
        if (value.length() > MAX_FILTER_TEXT || value.chars().anyMatch(Character::isISOControl)) {
            throw new ProblemException(
                    problem,
                    "'" + name + "' must be at most " + MAX_FILTER_TEXT + " characters, none of them control.");
        }
        return value;
    }

    private static Instant instant(String name, String value, Problem problem) {
        if (value == null || value.isEmpty()) {
            return null;
        }
        try {
            return OffsetDateTime.parse(value).toInstant();
        } catch (DateTimeParseException e) {
            throw new ProblemException(
                    problem, "'" + name + "' must be an ISO-8601 instant with its offset, e.g. 2026-12-03T14:00:00Z.");
        }
    }
}
