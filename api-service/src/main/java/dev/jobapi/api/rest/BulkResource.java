package dev.jobapi.api.rest;

import dev.jobapi.api.bulk.BulkAction;
import dev.jobapi.api.bulk.BulkActions;
import dev.jobapi.api.bulk.BulkFilter;
import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.security.Caller;
import dev.jobapi.api.security.CurrentCaller;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;
import org.jboss.logging.Logger;

/**
 * Bulk actions by filter for operators (docs/api.md#bulk-actions, docs/design.md "Bulk actions"):
 * a dry run counts, samples and signs; the execution presents the dry run's token and is refused
 * (409 {@code bulk-set-changed}) when the set changed; progress is readable while it runs.
 */
@APIResponse(responseCode = "401", description = "Missing, expired or foreign token (unauthenticated)")
@APIResponse(responseCode = "403", description = "forbidden (operators only)")
@Tag(name = OpenApiContract.OPERATORS_TAG)
@Path("/admin/bulk")
@RolesAllowed(Caller.OPERATOR)
@Produces(MediaType.APPLICATION_JSON)
public class BulkResource {

    private static final Logger LOG = Logger.getLogger(BulkResource.class);
    private static final int MAX_LISTED = 200;
    private static final String ACTIONS = "dlq-replay, dlq-discard, job-cancel, job-retry or quarantine-fail";

    /** Body of a dry run. */
    public record DryRunRequest(@Schema(description = "What to act on; every field optional") BulkFilter.Wire filter) {}

    /** Body of an execution: the dry run's filter and token, and the operator's reason. */
    public record ExecuteRequest(
            @Schema(description = "The same filter the dry run had") BulkFilter.Wire filter,
            @Schema(description = "The dry run's token (required; a 400 without it)") String token,
            @Schema(description = "Why (audited); required by dlq-discard and quarantine-fail") String reason) {}

    private final CurrentCaller currentCaller;
    private final RequestBodies bodies;
    private final BulkActions bulk;

    BulkResource(CurrentCaller currentCaller, RequestBodies bodies, BulkActions bulk) {
        this.currentCaller = currentCaller;
        this.bodies = bodies;
        this.bulk = bulk;
    }

    @Operation(
            operationId = "dryRunBulkAction",
            summary = "Count and sample what a bulk action would act on, and sign a token for its execution")
    @APIResponse(
            responseCode = "200",
            description = "The count, a sample and the token",
            content =
                    @Content(
                            mediaType = "application/json",
                            schema = @Schema(implementation = BulkActions.DryRun.class)))
    @APIResponse(responseCode = "400", description = "invalid-request")
    @APIResponse(responseCode = "404", description = "not-found (no such action)")
    @RequestBody(
            content =
                    @Content(
                            mediaType = "application/json",
                            schema = @Schema(implementation = DryRunRequest.class),
                            examples =
                                    @ExampleObject(
                                            name = "replay fake-b's dead letters since 14:00",
                                            value =
                                                    "{\"filter\":{\"provider\":\"fake-b\",\"since\":\"2026-12-03T14:00:00Z\"}}")))
    @POST
    @Path("{action}/dry-run")
    @Consumes(MediaType.APPLICATION_JSON)
    public BulkActions.DryRun dryRun(
            @Parameter(description = ACTIONS) @PathParam("action") String action, byte[] body) {
        BulkAction parsed = BulkAction.ofWire(action);
        DryRunRequest request = bodies.bind(bodies.tree(body), DryRunRequest.class);
        return bulk.dryRun(parsed, BulkFilter.parse(request.filter()));
    }

    @Operation(
            operationId = "executeBulkAction",
            summary = "Act on the set the dry run counted; refused when it changed since (409)")
    @APIResponse(
            responseCode = "200",
            description = "Done (dead letters of one batch are settled in the request)",
            content =
                    @Content(
                            mediaType = "application/json",
                            schema = @Schema(implementation = BulkActions.Progress.class)))
    @APIResponse(
            responseCode = "202",
            description = "Running in the background; Location names its progress",
            content =
                    @Content(
                            mediaType = "application/json",
                            schema = @Schema(implementation = BulkActions.Progress.class)))
    @APIResponse(responseCode = "400", description = "invalid-request (no token, a foreign token, no reason)")
    @APIResponse(responseCode = "404", description = "not-found (no such action)")
    @APIResponse(
            responseCode = "409",
            description = "bulk-set-changed: the set differs from the dry run's, or its token expired")
    @RequestBody(
            content =
                    @Content(
                            mediaType = "application/json",
                            schema = @Schema(implementation = ExecuteRequest.class),
                            examples =
                                    @ExampleObject(
                                            name = "execute",
                                            value =
                                                    "{\"filter\":{\"provider\":\"fake-b\"},\"token\":\"eyJ...\",\"reason\":\"fake-b back\"}")))
    @POST
    @Path("{action}/run")
    @Consumes(MediaType.APPLICATION_JSON)
    public Response execute(@Parameter(description = ACTIONS) @PathParam("action") String action, byte[] body) {
        BulkAction parsed = BulkAction.ofWire(action);
        ExecuteRequest request = bodies.bind(bodies.tree(body), ExecuteRequest.class);
        BulkFilter filter = BulkFilter.parse(request.filter());
        if (request.token() == null || request.token().isEmpty()) {
            throw new ProblemException(
                    Problem.INVALID_REQUEST, "'token' is required: run the dry run first and send its token.");
        }
        String reason =
                parsed.reasonRequired() || request.reason() != null ? bodies.reason("reason", request.reason()) : null;
        long id = bulk.start(
                parsed, filter, request.token(), reason, currentCaller.get().subject());
        if (BulkActions.runsInTheRequest(parsed, bulk.progress(id).total())) {
            try {
                bulk.runToEnd(id);
            } catch (RuntimeException failed) {
                // Started and committed: the runner retries what this request could not finish, so the
                // answer is the progress (202), not an error for an action that will still be done.
                LOG.warnf(failed, "Bulk action %d: its batch failed in the request; the runner retries", id);
            }
        }
        BulkActions.Progress now = bulk.progress(id);
        Response.ResponseBuilder answer = now.state().equals("done") ? Response.ok(now) : Response.accepted(now);
        return answer.header(HttpHeaders.LOCATION, "/admin/bulk/" + id).build();
    }

    @Operation(operationId = "bulkActionProgress", summary = "A bulk action's progress and outcome counts")
    @APIResponse(
            responseCode = "200",
            description = "Its progress",
            content =
                    @Content(
                            mediaType = "application/json",
                            schema = @Schema(implementation = BulkActions.Progress.class)))
    @APIResponse(responseCode = "404", description = "not-found")
    @GET
    @Path("{id}")
    public BulkActions.Progress progress(@PathParam("id") String id) {
        long parsed;
        try {
            parsed = Long.parseLong(id);
        } catch (NumberFormatException e) {
            throw new ProblemException(Problem.NOT_FOUND, "No bulk action " + id + ".");
        }
        return bulk.progress(parsed);
    }

    @Operation(operationId = "listBulkActions", summary = "Bulk actions, newest first")
    @APIResponse(
            responseCode = "200",
            description = "The newest bulk actions",
            content =
                    @Content(
                            mediaType = "application/json",
                            schema = @Schema(type = SchemaType.ARRAY, implementation = BulkActions.Progress.class)))
    @APIResponse(responseCode = "400", description = "invalid-query")
    @GET
    public List<BulkActions.Progress> list(@QueryParam("limit") String limit) {
        return bulk.recent((int) QueryValues.whole("limit", limit, 20, 1, MAX_LISTED));
    }
}
