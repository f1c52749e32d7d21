package dev.jobapi.api.rest;

import dev.jobapi.api.mapping.AttemptView;
import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.security.Caller;
import dev.jobapi.api.security.CurrentCaller;
import dev.jobapi.api.service.Quarantine;
import dev.jobapi.common.attempt.AttemptRepository;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.util.List;
import java.util.UUID;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
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
    private final AttemptRepository attempts;

    QuarantineResource(
            CurrentCaller currentCaller, RequestBodies bodies, Quarantine quarantine, AttemptRepository attempts) {
        this.currentCaller = currentCaller;
        this.bodies = bodies;
        this.quarantine = quarantine;
        this.attempts = attempts;
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
}
