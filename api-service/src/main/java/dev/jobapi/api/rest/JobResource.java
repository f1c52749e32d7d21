package dev.jobapi.api.rest;

import com.fasterxml.jackson.databind.JsonNode;
import dev.jobapi.api.mapping.AttemptView;
import dev.jobapi.api.mapping.JobPage;
import dev.jobapi.api.mapping.JobSummary;
import dev.jobapi.api.mapping.JobView;
import dev.jobapi.api.mapping.JobViews;
import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.security.Caller;
import dev.jobapi.api.security.CurrentCaller;
import dev.jobapi.api.service.ApiMetrics;
import dev.jobapi.api.service.AttemptRequests;
import dev.jobapi.api.service.JobAccess;
import dev.jobapi.api.service.JobCancellation;
import dev.jobapi.api.service.JobIntake;
import dev.jobapi.api.service.JobQueries;
import dev.jobapi.api.service.ListTurns;
import dev.jobapi.api.service.Replayable;
import dev.jobapi.api.service.RequestedDeadline;
import dev.jobapi.api.stream.EventCursor;
import dev.jobapi.api.stream.FeedEvent;
import dev.jobapi.api.stream.JobStreams;
import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.attempt.Generation;
import dev.jobapi.common.digest.CanonicalJson;
import dev.jobapi.common.job.Job;
import dev.jobapi.common.job.JobState;
import jakarta.annotation.security.RolesAllowed;
import jakarta.transaction.Transactional;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.EntityTag;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Request;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.sse.Sse;
import jakarta.ws.rs.sse.SseEventSink;
import java.net.URI;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.UUID;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.enums.ParameterIn;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.headers.Header;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.jboss.resteasy.reactive.RestResponse;
import org.jboss.resteasy.reactive.RestResponse.ResponseBuilder;

/** The job endpoints of docs/api.md#jobs: intake, reads, attempts, cancel and output. */
// Every operation answers these; they are declared once for the class.
@APIResponse(responseCode = "401", description = "Missing, expired or foreign token (unauthenticated)")
@Path("/jobs")
@RolesAllowed({Caller.USER, Caller.REVIEWER, Caller.OPERATOR})
@Produces(MediaType.APPLICATION_JSON)
public class JobResource {

    static final String IDEMPOTENCY_KEY = "Idempotency-Key";
    static final String REPLAYED = "Idempotent-Replayed";
    static final int MAX_PAGE = 100;
    static final int TIMELINE_PAGE = 500;
    static final int MAX_TIMELINE_PAGE = 1000;

    private final CurrentCaller currentCaller;
    private final RequestBodies bodies;
    private final JobIntake intake;
    private final AttemptRequests attemptRequests;
    private final JobCancellation cancellation;
    private final JobQueries queries;
    private final ListTurns listTurns;
    private final JobAccess access;
    private final JobViews views;
    private final ApiMetrics metrics;
    private final ConditionalReads conditionalReads;
    private final JobStreams streams;

    JobResource(
            CurrentCaller currentCaller,
            RequestBodies bodies,
            JobIntake intake,
            AttemptRequests attemptRequests,
            JobCancellation cancellation,
            JobQueries queries,
            ListTurns listTurns,
            JobAccess access,
            JobViews views,
            ApiMetrics metrics,
            ConditionalReads conditionalReads,
            JobStreams streams) {
        this.currentCaller = currentCaller;
        this.bodies = bodies;
        this.intake = intake;
        this.attemptRequests = attemptRequests;
        this.cancellation = cancellation;
        this.queries = queries;
        this.listTurns = listTurns;
        this.access = access;
        this.views = views;
        this.metrics = metrics;
        this.conditionalReads = conditionalReads;
        this.streams = streams;
    }

    @Operation(operationId = "createJob", summary = "Create a job, or replay the job this Idempotency-Key made")
    @APIResponse(
            responseCode = "201",
            description = "Created; Location names the job",
            content = @Content(mediaType = "application/json", schema = @Schema(implementation = JobView.class)))
    @APIResponse(
            responseCode = "200",
            description = "Replayed: Idempotent-Replayed: true",
            content = @Content(mediaType = "application/json", schema = @Schema(implementation = JobView.class)))
    @APIResponse(
            responseCode = "400",
            description = "idempotency-key-missing, idempotency-key-invalid, invalid-request, not-i-json")
    @APIResponse(
            responseCode = "429",
            description = "budget-exceeded (today's token budget is spent), spend-budget-exceeded (a money budget"
                    + " is full), too-many-uploads")
    @APIResponse(responseCode = "413", description = "payload-too-large (body over 1 MiB, input over 512 KiB)")
    @APIResponse(responseCode = "415", description = "unsupported-media-type")
    @APIResponse(responseCode = "422", description = "idempotency-key-reused, unknown-provider")
    @RequestBody(
            description = "input: a JSON object of at most 512 KiB as canonical JSON; the whole body at most 1 MiB,"
                    + " 10,000 JSON values and 32 levels of nesting, no NUL characters; I-JSON (RFC 7493): numbers a"
                    + " double carries unchanged, no lone surrogates (400 not-i-json), no repeated member names. input.repository and input.baseRef, when given, are git names: a repository"
                    + " name of letters, digits, '.', '_', '-' (optionally owner/name), a branch or tag name as"
                    + " git check-ref-format allows, without control characters or spaces.",
            content =
                    @Content(
                            mediaType = "application/json",
                            schema = @Schema(implementation = JobRequests.CreateJob.class),
                            examples =
                                    @ExampleObject(
                                            name = "example",
                                            value =
                                                    "{\"input\":{\"prompt\":\"fix the off-by-one\",\"repository\":\"demo\",\"baseRef\":\"main\"},\"provider\":\"fake-a\",\"fallback\":[\"fake-b\"]}")))
    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    public RestResponse<JobView> create(@HeaderParam(IDEMPOTENCY_KEY) String idempotencyKey, byte[] body) {
        Caller caller = currentCaller.get();
        String key = IdempotencyKeys.require(idempotencyKey);
        JsonNode tree = bodies.tree(body);
        JobRequests.CreateJob request = bodies.bind(tree, JobRequests.CreateJob.class);
        if (request.input() == null || !request.input().isObject()) {
            throw new ProblemException(Problem.INVALID_REQUEST, "'input' is required and must be a JSON object.");
        }
        String digest = CanonicalJson.digest(tree);
        Replayable<JobView> job;
        try {
            String input = CanonicalJson.write(request.input());
            bodies.requireStorableInput(input);
            GitNames.requireValid(request.input());
            job = intake.submit(
                    caller,
                    key,
                    input,
                    JobSummary.InputPreview.of(request.input()),
                    request.provider(),
                    request.fallback() == null ? List.of() : request.fallback(),
                    deadline(request),
                    digest);
        } catch (ProblemException refused) {
            // A rule that refuses this body now may have let it make its job before (a provider
            // removed from the configuration, a bound tightened since): a retry gets that job.
            job = intake.replayOf(caller, key, digest).orElseThrow(() -> refused);
        }
        if (!job.created()) {
            metrics.jobReplayed();
            return ResponseBuilder.ok(job.value()).header(REPLAYED, "true").build();
        }
        metrics.jobCreated();
        // Relative (RFC 9110 allows it): an absolute URI would be built from the client's Host header.
        return ResponseBuilder.create(RestResponse.Status.CREATED, job.value())
                .header(HttpHeaders.LOCATION, "/jobs/" + job.value().id())
                .build();
    }

    private static RequestedDeadline deadline(JobRequests.CreateJob request) {
        if (request.deadline() != null && request.ttlSeconds() != null) {
            throw new ProblemException(Problem.INVALID_REQUEST, "Give 'deadline' or 'ttlSeconds', not both.");
        }
        if (request.ttlSeconds() != null) {
            long seconds = request.ttlSeconds();
            if (seconds < 1 || seconds > RequestedDeadline.LONGEST.toSeconds()) {
                throw new ProblemException(
                        Problem.INVALID_REQUEST,
                        "'ttlSeconds' must be 1 to " + RequestedDeadline.LONGEST.toSeconds() + ".");
            }
            return new RequestedDeadline(null, Duration.ofSeconds(seconds));
        }
        if (request.deadline() != null) {
            try {
                return new RequestedDeadline(
                        OffsetDateTime.parse(request.deadline()).toInstant(), null);
            } catch (DateTimeParseException e) {
                throw new ProblemException(
                        Problem.INVALID_REQUEST,
                        "'deadline' must be an RFC 3339 time with an offset, such as 2026-12-03T18:00:00Z.");
            }
        }
        return RequestedDeadline.NONE;
    }

    @Operation(
            operationId = "listJobs",
            summary = "The caller's jobs, newest first, cursor-paginated",
            description = "Summaries: the input is a preview (the first 200 characters of prompt, repository"
                    + " and baseRef) with inputBytes, the stored size; GET /jobs/{id} has the whole input,"
                    + " attempts and actions. limit: 1-100 (default 20).")
    @APIResponse(responseCode = "200", description = "A page of job summaries")
    @APIResponse(responseCode = "400", description = "invalid-request (limit, state or cursor)")
    @GET
    public JobPage list(
            @QueryParam("state") String state,
            @QueryParam("limit") String limitValue,
            @QueryParam("cursor") String cursor) {
        Caller caller = currentCaller.get();
        int limit = (int) QueryValues.whole("limit", limitValue, 20, 1, MAX_PAGE);
        JobState wanted = parseState(state);
        // Not @Transactional here: the page's transaction, and so its connection, is taken in its turn.
        JobQueries.Page page = listTurns.inTurn(() -> queries.list(caller, wanted, limit, cursor));
        return new JobPage(page.jobs(), page.nextCursor());
    }

    @Operation(
            operationId = "getJob",
            summary = "One job with its attempts and the actions the caller may take; conditional on its ETag")
    @APIResponse(
            responseCode = "200",
            description = "The job; ETag changes whenever anything in this body changes",
            content = @Content(mediaType = "application/json", schema = @Schema(implementation = JobView.class)))
    @APIResponse(responseCode = "304", description = "Unchanged since the If-None-Match tag")
    @APIResponse(responseCode = "404", description = "job-not-found (also another owner's job)")
    @GET
    @Path("{id}")
    @Transactional
    public Response get(@PathParam("id") String id, @Context Request request) {
        Caller caller = currentCaller.get();
        return conditionalReads.okOrNotModified(request, views.of(access.visible(caller, jobId(id)), caller));
    }

    @Operation(
            operationId = "requestAttempt",
            summary = "Request another attempt; a reviewer may supersede open attempts with a reason")
    @APIResponse(
            responseCode = "201",
            description = "The new attempt",
            content = @Content(mediaType = "application/json", schema = @Schema(implementation = AttemptView.class)))
    @APIResponse(
            responseCode = "200",
            description = "Replayed: Idempotent-Replayed: true",
            content = @Content(mediaType = "application/json", schema = @Schema(implementation = AttemptView.class)))
    @APIResponse(
            responseCode = "429",
            description = "budget-exceeded (today's token budget is spent), spend-budget-exceeded (a money budget"
                    + " is full), too-many-uploads")
    @APIResponse(
            responseCode = "400",
            description = "idempotency-key-missing, idempotency-key-invalid, invalid-request")
    @APIResponse(responseCode = "403", description = "forbidden (supersede without the reviewer role)")
    @APIResponse(responseCode = "404", description = "job-not-found")
    @APIResponse(
            responseCode = "409",
            description = "review-required, job-closed, fallback-disabled, attempt-limit-reached")
    @APIResponse(responseCode = "422", description = "idempotency-key-reused, unknown-provider")
    @RequestBody(
            content =
                    @Content(
                            mediaType = "application/json",
                            schema = @Schema(implementation = JobRequests.RequestAttempt.class),
                            examples =
                                    @ExampleObject(
                                            name = "example",
                                            value =
                                                    "{\"provider\":\"fake-b\",\"supersede\":{\"reason\":\"provider A timed out at 09:17\"}}")))
    @POST
    @Path("{id}/attempts")
    @Consumes(MediaType.APPLICATION_JSON)
    public RestResponse<AttemptView> requestAttempt(
            @PathParam("id") String id, @HeaderParam(IDEMPOTENCY_KEY) String idempotencyKey, byte[] body) {
        Caller caller = currentCaller.get();
        UUID jobId = jobId(id);
        String key = IdempotencyKeys.require(idempotencyKey);
        JsonNode tree = bodies.tree(body);
        JobRequests.RequestAttempt request = bodies.bind(tree, JobRequests.RequestAttempt.class);
        String reason = null;
        if (request.supersede() != null) {
            reason = bodies.reason("supersede.reason", request.supersede().reason());
        }
        Replayable<Attempt> attempt =
                attemptRequests.request(caller, jobId, key, request.provider(), reason, CanonicalJson.digest(tree));
        AttemptView view = AttemptView.of(attempt.value(), null);
        if (!attempt.created()) {
            return ResponseBuilder.ok(view).header(REPLAYED, "true").build();
        }
        return ResponseBuilder.create(RestResponse.Status.CREATED, view)
                .header(HttpHeaders.LOCATION, "/jobs/" + jobId)
                .build();
    }

    @Operation(operationId = "cancelJob", summary = "Cancel the job (idempotent)")
    @APIResponse(responseCode = "200", description = "The cancelled job")
    @APIResponse(responseCode = "404", description = "job-not-found")
    @APIResponse(responseCode = "409", description = "job-closed (a result was already chosen)")
    @POST
    @Path("{id}/cancel")
    public JobView cancel(@PathParam("id") String id) {
        Caller caller = currentCaller.get();
        Job job = cancellation.cancel(caller, jobId(id));
        return views.of(job, caller);
    }

    /** The job's history in commit order: requests, replays, deliveries, transitions, winner, apply, usage. */
    @Operation(
            operationId = "getJobTimeline",
            summary = "The job's history in commit order, a page at a time (Link rel=next names the next page)")
    @APIResponse(
            responseCode = "200",
            description = "Events after the event id `after`, at most `limit` (default 500, at most 1000)",
            content =
                    @Content(
                            mediaType = "application/json",
                            schema = @Schema(type = SchemaType.ARRAY, implementation = JobQueries.Event.class)))
    @APIResponse(responseCode = "400", description = "invalid-query (after or limit not a whole number in range)")
    @APIResponse(responseCode = "404", description = "job-not-found")
    @GET
    @Path("{id}/timeline")
    @Transactional
    public Response timeline(
            @PathParam("id") String id,
            @QueryParam("after") String afterValue,
            @QueryParam("limit") String limitValue) {
        Caller caller = currentCaller.get();
        long after = QueryValues.whole("after", afterValue, 0, 0, Long.MAX_VALUE);
        int limit = (int) QueryValues.whole("limit", limitValue, TIMELINE_PAGE, 1, MAX_TIMELINE_PAGE);
        UUID job = access.visible(caller, jobId(id)).id();
        List<JobQueries.Event> events = queries.timeline(job, after, limit);
        Response.ResponseBuilder answer = Response.ok(events);
        if (events.size() == limit) {
            // Relative, as Location is: never built from the client's Host header.
            answer.link(
                    URI.create("/jobs/" + job + "/timeline?after="
                            + events.get(limit - 1).id() + "&limit=" + limit),
                    "next");
        }
        return answer.build();
    }

    @Operation(
            operationId = "streamJobEvents",
            summary = "The job's events as Server-Sent Events: its timeline so far (or after Last-Event-ID), then"
                    + " each event as it commits, until the job's last event")
    @APIResponse(
            responseCode = "200",
            description = "text/event-stream: each event's id is its cursor (resume with Last-Event-ID), its name"
                    + " the event's kind, its data a FeedEvent; a comment every 15 s of quiet; the stream ends"
                    + " after the event that ended the job",
            content =
                    @Content(
                            mediaType = MediaType.SERVER_SENT_EVENTS,
                            schema = @Schema(implementation = FeedEvent.class)))
    @APIResponse(responseCode = "400", description = "invalid-query (Last-Event-ID is not a cursor)")
    @APIResponse(responseCode = "404", description = "job-not-found")
    @APIResponse(
            responseCode = "429",
            description = "too-many-streams (the caller holds 20 open streams on this server)",
            headers = @Header(name = "Retry-After", schema = @Schema(type = SchemaType.INTEGER)))
    @APIResponse(
            responseCode = "503",
            description = "server-busy (this server holds as many streams as it may; another may not)",
            headers = @Header(name = "Retry-After", schema = @Schema(type = SchemaType.INTEGER)))
    @GET
    @Path("{id}/events")
    @Produces(MediaType.SERVER_SENT_EVENTS)
    @Transactional
    public void streamEvents(
            @PathParam("id") String id,
            @Parameter(
                            in = ParameterIn.HEADER,
                            name = "Last-Event-ID",
                            description = "Resume after this event (a browser's EventSource sends it by itself)",
                            schema = @Schema(type = SchemaType.STRING, pattern = EventCursor.PATTERN))
                    @HeaderParam("Last-Event-ID")
                    String lastEventId,
            @Context SseEventSink sink,
            @Context Sse sse) {
        Caller caller = currentCaller.get();
        EventCursor from = EventCursor.parse("Last-Event-ID", lastEventId);
        UUID job = access.visible(caller, jobId(id)).id();
        streams.open(caller.subject(), job, from, sink, sse);
    }

    @Operation(
            operationId = "getJobOutput",
            summary = "The winning attempt's patch (text/x-diff, ETag = output digest)")
    @APIResponse(
            responseCode = "200",
            description = "The patch",
            content = @Content(mediaType = "text/x-diff", schema = @Schema(type = SchemaType.STRING)))
    @APIResponse(responseCode = "404", description = "job-not-found")
    @APIResponse(responseCode = "409", description = "no-output")
    @GET
    @Path("{id}/output")
    @Produces({"text/x-diff", MediaType.APPLICATION_JSON})
    @Transactional
    public Response output(@PathParam("id") String id) {
        Caller caller = currentCaller.get();
        Generation generation = queries.output(caller, jobId(id));
        return Response.ok(generation.patch(), "text/x-diff")
                .tag(new EntityTag(generation.outputDigest()))
                .build();
    }

    private static UUID jobId(String id) {
        try {
            return UUID.fromString(id);
        } catch (IllegalArgumentException e) {
            throw new ProblemException(Problem.JOB_NOT_FOUND, "No job " + id + " is visible to you.");
        }
    }

    private static JobState parseState(String state) {
        if (state == null || state.isEmpty()) {
            return null;
        }
        try {
            return JobState.fromWireName(state);
        } catch (IllegalArgumentException e) {
            throw new ProblemException(Problem.INVALID_QUERY, "Unknown state '" + state + "'.");
        }
    }
}
