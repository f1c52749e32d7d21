package dev.jobapi.api.rest;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.security.Caller;
import dev.jobapi.api.security.CurrentCaller;
import dev.jobapi.api.service.ApiMetrics;
import dev.jobapi.api.service.DeadLetterQueue;
import dev.jobapi.common.attempt.AttemptRepository;
import dev.jobapi.common.attempt.AttemptState;
import dev.jobapi.common.audit.AuditTrail;
import dev.jobapi.common.job.JobRepository;
import io.quarkus.narayana.jta.QuarkusTransaction;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * The dead-letter queue for operators (docs/api.md#operators-role-operator, docs/design.md, rule
 * 13): listed without being consumed, replayed confirmed-before-removed, every replay audited.
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

    /** Body of POST /admin/dlq/replay. */
    public record ReplayRequest(List<String> ids, Boolean all) {}

    /** One page of the dead-letter queue. */
    public record DeadLetterPage(List<DeadLetterQueue.DeadLetter> items, long depth, int offset, int limit) {}

    private final CurrentCaller currentCaller;
    private final RequestBodies bodies;
    private final DeadLetterQueue deadLetters;
    private final AuditTrail audit;
    private final AttemptRepository attempts;
    private final JobRepository jobs;
    private final ApiMetrics metrics;

    DeadLetterResource(
            CurrentCaller currentCaller,
            RequestBodies bodies,
            DeadLetterQueue deadLetters,
            AuditTrail audit,
            AttemptRepository attempts,
            JobRepository jobs,
            ApiMetrics metrics) {
        this.currentCaller = currentCaller;
        this.bodies = bodies;
        this.deadLetters = deadLetters;
        this.audit = audit;
        this.attempts = attempts;
        this.jobs = jobs;
        this.metrics = metrics;
    }

    @Operation(operationId = "listDeadLetters", summary = "Dead-lettered attempt messages, without consuming them")
    @APIResponse(responseCode = "200", description = "A page of dead letters and the DLQ depth")
    @APIResponse(responseCode = "400", description = "invalid-request")
    @GET
    public DeadLetterPage deadLetters(
            @QueryParam("offset") String offsetValue, @QueryParam("limit") String limitValue) {
        int offset = (int) QueryValues.whole("offset", offsetValue, 0, 0, Integer.MAX_VALUE);
        int limit = (int) QueryValues.whole("limit", limitValue, 50, 1, MAX_PAGE);
        // Depth first: while the listing holds messages unacked the broker does not count them as ready.
        long depth = deadLetters.depth();
        return new DeadLetterPage(deadLetters.list(offset, limit), depth, offset, limit);
    }

    @Operation(
            operationId = "replayDeadLetters",
            summary = "Move dead letters back to the work queue (confirmed before removal); audited")
    @APIResponse(responseCode = "200", description = "How many were replayed and skipped")
    @APIResponse(responseCode = "400", description = "invalid-request")
    @RequestBody(
            content =
                    @Content(
                            mediaType = "application/json",
                            schema = @Schema(implementation = ReplayRequest.class),
                            examples = @ExampleObject(name = "example", value = "{\"all\":true}")))
    @POST
    @Path("replay")
    @Consumes(MediaType.APPLICATION_JSON)
    public DeadLetterQueue.ReplayResult replay(byte[] body) {
        ReplayRequest request = bodies.bind(bodies.tree(body), ReplayRequest.class);
        boolean all = Boolean.TRUE.equals(request.all());
        if (!all && (request.ids() == null || request.ids().isEmpty())) {
            throw new ProblemException(Problem.INVALID_REQUEST, "Send {\"ids\": [...]} or {\"all\": true}.");
        }
        if (!all && request.ids().stream().anyMatch(id -> id == null || id.isBlank())) {
            throw new ProblemException(Problem.INVALID_REQUEST, "Every entry of 'ids' must be a dead letter's id.");
        }
        Set<String> ids = all ? Set.of() : Set.copyOf(request.ids());
        DeadLetterQueue.ReplayResult result = deadLetters.replay(ids, all, this::nothingLeftToDo);
        String operator = currentCaller.get().subject();
        QuarkusTransaction.requiringNew()
                .run(() -> audit.record(
                        operator,
                        "dlq.replay",
                        all ? "all" : "selected ids",
                        null,
                        null,
                        "replayed=" + result.replayedIds() + " skipped(terminal)=" + result.skippedIds()));
        metrics.replayed(result.replayed());
        return result;
    }

    /**
     * A dead letter whose attempt failed or was superseded, or whose job is closed, has nothing left
     * for a worker to do. A succeeded attempt of an open job still has its apply to finish.
     */
    private boolean nothingLeftToDo(UUID attemptId) {
        return QuarkusTransaction.requiringNew().call(() -> attempts.findByIdOptional(attemptId)
                .map(a -> a.state() == AttemptState.FAILED
                        || a.state() == AttemptState.SUPERSEDED
                        || jobs.findById(a.jobId()).state().isTerminal())
                .orElse(false));
    }
}
