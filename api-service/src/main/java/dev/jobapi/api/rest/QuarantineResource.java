package dev.jobapi.api.rest;

import dev.jobapi.api.mapping.AttemptView;
import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.security.Caller;
import dev.jobapi.api.security.CurrentCaller;
import dev.jobapi.api.service.Quarantine;
import dev.jobapi.common.attempt.UsageRecord;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import java.util.List;
import java.util.UUID;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * Attempts held in quarantine because the provider reported no usage (docs/design.md, rule 9):
 * listed for operators, and released by one with the reconciled usage or failed.
 */
// Every operation answers these; they are declared once for the class.
@APIResponse(responseCode = "401", description = "Missing, expired or foreign token (unauthenticated)")
@APIResponse(responseCode = "403", description = "forbidden (operators only)")
@Tag(name = OpenApiContract.OPERATORS_TAG)
@Path("/admin")
@RolesAllowed(Caller.OPERATOR)
@Produces(MediaType.APPLICATION_JSON)
public class QuarantineResource {

    /** Body of POST /admin/attempts/{id}/resolve: usage, or fail, with a reason. */
    public record Resolution(UsageReport usage, Boolean fail, String reason) {}

    /** Token counts as the provider reconciled them. */
    public record UsageReport(Integer promptTokens, Integer completionTokens) {}

    private final CurrentCaller currentCaller;
    private final RequestBodies bodies;
    private final Quarantine quarantine;

    QuarantineResource(CurrentCaller currentCaller, RequestBodies bodies, Quarantine quarantine) {
        this.currentCaller = currentCaller;
        this.bodies = bodies;
        this.quarantine = quarantine;
    }

    /** The most held attempts one answer lists; resolving them brings the next ones up. */
    static final int MAX_LISTED = 500;

    @Operation(
            operationId = "listQuarantined",
            summary = "Attempts held because the provider reported no usage, the longest held first")
    @APIResponse(responseCode = "200", description = "The held attempts, at most 'limit' of them")
    @APIResponse(responseCode = "400", description = "invalid-query")
    @GET
    @Path("quarantine")
    public List<AttemptView> quarantined(
            @Parameter(description = "How many to list, 1 to " + MAX_LISTED + " (default 50)") @QueryParam("limit")
                    String limitValue) {
        int limit = (int) QueryValues.whole("limit", limitValue, 50, 1, MAX_LISTED);
        return quarantine.held(limit).stream()
                .map(held -> AttemptView.of(held.attempt(), held.usage()))
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
                || !UsageRecord.isPlausible(usage.promptTokens())
                || !UsageRecord.isPlausible(usage.completionTokens())) {
            throw new ProblemException(
                    Problem.INVALID_REQUEST,
                    "'usage' needs promptTokens and completionTokens, both from 0 to " + UsageRecord.MAX_TOKENS + ".");
        }
        return AttemptView.of(
                quarantine.resolveWithUsage(
                        operator, attemptId, usage.promptTokens(), usage.completionTokens(), reason),
                null);
    }
}
