package dev.jobapi.api.rest;

import dev.jobapi.api.mapping.AttemptView;
import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.security.Caller;
import dev.jobapi.api.security.CurrentCaller;
import dev.jobapi.api.service.ApiMetrics;
import dev.jobapi.api.service.AuditLog;
import dev.jobapi.api.service.FallbackSwitch;
import dev.jobapi.api.service.Quarantine;
import dev.jobapi.common.attempt.AttemptRepository;
import dev.jobapi.common.attempt.AttemptState;
import dev.jobapi.common.audit.AuditTrail;
import dev.jobapi.common.fallback.KillSwitch;
import dev.jobapi.common.job.JobRepository;
import dev.jobapi.common.message.DeadLetterQueue;
import io.quarkus.narayana.jta.QuarkusTransaction;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
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

/**
 * The operators' endpoints (docs/api.md#operators-role-operator): dead letters, the kill switch,
 * quarantine and the audit trail.
 */
// Every operation answers these; they are declared once for the class.
@APIResponse(responseCode = "401", description = "Missing, expired or foreign token (unauthenticated)")
@APIResponse(responseCode = "403", description = "forbidden (operators only)")
@Path("/admin")
@RolesAllowed(Caller.OPERATOR)
@Produces(MediaType.APPLICATION_JSON)
public class AdminResource {

    private static final int MAX_PAGE = 500;

    /** Body of PUT /admin/fallback. */
    public record FallbackChange(Boolean enabled, String reason) {}

    /** Body of POST /admin/dlq/replay. */
    public record ReplayRequest(List<String> ids, Boolean all) {}

    /** Body of POST /admin/attempts/{id}/resolve: usage, or fail, with a reason. */
    public record Resolution(UsageReport usage, Boolean fail, String reason) {}

    /** Token counts as the provider reconciled them. */
    public record UsageReport(Integer promptTokens, Integer completionTokens) {}

    /** One page of the dead-letter queue. */
    public record DeadLetterPage(List<DeadLetterQueue.DeadLetter> items, long depth, int offset, int limit) {}

    private final CurrentCaller currentCaller;
    private final RequestBodies bodies;
    private final FallbackSwitch fallbackSwitch;
    private final DeadLetterQueue deadLetters;
    private final Quarantine quarantine;
    private final AuditLog auditLog;
    private final AuditTrail audit;
    private final AttemptRepository attempts;
    private final JobRepository jobs;
    private final ApiMetrics metrics;

    AdminResource(
            CurrentCaller currentCaller,
            RequestBodies bodies,
            FallbackSwitch fallbackSwitch,
            DeadLetterQueue deadLetters,
            Quarantine quarantine,
            AuditLog auditLog,
            AuditTrail audit,
            AttemptRepository attempts,
            JobRepository jobs,
            ApiMetrics metrics) {
        this.currentCaller = currentCaller;
        this.bodies = bodies;
        this.fallbackSwitch = fallbackSwitch;
        this.deadLetters = deadLetters;
        this.quarantine = quarantine;
        this.auditLog = auditLog;
        this.audit = audit;
        this.attempts = attempts;
        this.jobs = jobs;
        this.metrics = metrics;
    }

    @Operation(
            operationId = "getFallback",
            summary = "The kill switch for new fallback attempts: position, who set it, when, why")
    @APIResponse(responseCode = "200", description = "The switch")
    @GET
    @Path("fallback")
    public KillSwitch.State fallback() {
        return fallbackSwitch.state();
    }

    @Operation(operationId = "setFallback", summary = "Flip the kill switch; disabling deletes nothing and is audited")
    @APIResponse(responseCode = "200", description = "The switch")
    @APIResponse(responseCode = "400", description = "invalid-request (enabled missing, or no reason when disabling)")
    @RequestBody(
            content =
                    @Content(
                            mediaType = "application/json",
                            schema = @Schema(implementation = FallbackChange.class),
                            examples =
                                    @ExampleObject(
                                            name = "example",
                                            value = "{\"enabled\":false,\"reason\":\"provider B returns garbage\"}")))
    @PUT
    @Path("fallback")
    @Consumes(MediaType.APPLICATION_JSON)
    public KillSwitch.State setFallback(byte[] body) {
        FallbackChange change = bodies.bind(bodies.tree(body), FallbackChange.class);
        if (change.enabled() == null) {
            throw new ProblemException(Problem.INVALID_REQUEST, "'enabled' (true or false) is required.");
        }
        // A reason is required when disabling and checked whenever one is given.
        String reason = !change.enabled() || change.reason() != null ? bodies.reason("reason", change.reason()) : null;
        return fallbackSwitch.set(currentCaller.get(), change.enabled(), reason);
    }

    @Operation(operationId = "listDeadLetters", summary = "Dead-lettered attempt messages, without consuming them")
    @APIResponse(responseCode = "200", description = "A page of dead letters and the DLQ depth")
    @APIResponse(responseCode = "400", description = "invalid-request")
    @GET
    @Path("dlq")
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
    @Path("dlq/replay")
    @Consumes(MediaType.APPLICATION_JSON)
    public DeadLetterQueue.ReplayResult replay(byte[] body) {
        ReplayRequest request = bodies.bind(bodies.tree(body), ReplayRequest.class);
        boolean all = Boolean.TRUE.equals(request.all());
        if (!all && (request.ids() == null || request.ids().isEmpty())) {
            throw new ProblemException(Problem.INVALID_REQUEST, "Send {\"ids\": [...]} or {\"all\": true}.");
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

    @Operation(operationId = "listQuarantined", summary = "Attempts held because the provider reported no usage")
    @APIResponse(responseCode = "200", description = "The held attempts")
    @GET
    @Path("quarantine")
    public List<AttemptView> quarantined() {
        return quarantine.held().stream()
                .map(a -> AttemptView.of(a, attempts.usage(a.id()).orElse(null)))
                .toList();
    }

    @Operation(
            operationId = "resolveAttempt",
            summary = "Record reconciled usage (the attempt then goes to the election) or fail a held attempt")
    @APIResponse(responseCode = "200", description = "The attempt")
    @APIResponse(responseCode = "400", description = "invalid-request")
    @APIResponse(responseCode = "404", description = "not-found")
    @APIResponse(responseCode = "409", description = "not-quarantined")
    @RequestBody(
            content =
                    @Content(
                            mediaType = "application/json",
                            schema = @Schema(implementation = Resolution.class),
                            examples =
                                    @ExampleObject(
                                            name = "example",
                                            value =
                                                    "{\"usage\":{\"promptTokens\":12,\"completionTokens\":40},\"reason\":\"provider invoice line 7\"}")))
    @POST
    @Path("attempts/{id}/resolve")
    @Consumes(MediaType.APPLICATION_JSON)
    public AttemptView resolve(@PathParam("id") String id, byte[] body) {
        Resolution resolution = bodies.bind(bodies.tree(body), Resolution.class);
        UUID attemptId;
        try {
            attemptId = UUID.fromString(id);
        } catch (IllegalArgumentException e) {
            throw new ProblemException(Problem.NOT_FOUND, "No attempt " + id + ".");
        }
        String reason = bodies.reason("reason", resolution.reason());
        boolean fail = Boolean.TRUE.equals(resolution.fail());
        UsageReport usage = resolution.usage();
        if (fail == (usage != null)) {
            throw new ProblemException(Problem.INVALID_REQUEST, "Send either 'usage' or \"fail\": true.");
        }
        Caller operator = currentCaller.get();
        if (fail) {
            return AttemptView.of(quarantine.resolveAsFailed(operator, attemptId, reason), null);
        }
        if (usage.promptTokens() == null
                || usage.completionTokens() == null
                || usage.promptTokens() < 0
                || usage.completionTokens() < 0) {
            throw new ProblemException(
                    Problem.INVALID_REQUEST, "'usage' needs non-negative promptTokens and completionTokens.");
        }
        return AttemptView.of(
                quarantine.resolveWithUsage(
                        operator, attemptId, usage.promptTokens(), usage.completionTokens(), reason),
                null);
    }

    @Operation(operationId = "listAudit", summary = "Operator and reviewer actions, newest first")
    @APIResponse(responseCode = "200", description = "Audit records")
    @APIResponse(responseCode = "400", description = "invalid-request")
    @GET
    @Path("audit")
    public List<AuditLog.Entry> audit(
            @QueryParam("before") String beforeValue, @QueryParam("limit") String limitValue) {
        long before = QueryValues.whole("before", beforeValue, Long.MAX_VALUE, 1, Long.MAX_VALUE);
        int limit = (int) QueryValues.whole("limit", limitValue, 50, 1, MAX_PAGE);
        return auditLog.entries(before, limit);
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
