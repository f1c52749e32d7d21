package dev.jobapi.api.rest;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.security.Caller;
import dev.jobapi.api.security.CurrentCaller;
import dev.jobapi.common.fallback.KillSwitch;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * The kill switch for new fallback attempts (docs/api.md#operators-role-operator, docs/design.md,
 * rule 11): its position, and the operators' flip, which deletes nothing and is audited.
 */
// Every operation answers these; they are declared once for the class.
@APIResponse(responseCode = "401", description = "Missing, expired or foreign token (unauthenticated)")
@APIResponse(responseCode = "403", description = "forbidden (operators only)")
@Tag(name = OpenApiContract.OPERATORS_TAG)
@Path("/admin/fallback")
@RolesAllowed(Caller.OPERATOR)
@Produces(MediaType.APPLICATION_JSON)
public class KillSwitchResource {

    /** Body of PUT /admin/fallback. */
    public record FallbackChange(Boolean enabled, String reason) {}

    private final CurrentCaller currentCaller;
    private final RequestBodies bodies;
    private final KillSwitch killSwitch;

    KillSwitchResource(CurrentCaller currentCaller, RequestBodies bodies, KillSwitch killSwitch) {
        this.currentCaller = currentCaller;
        this.bodies = bodies;
        this.killSwitch = killSwitch;
    }

    @Operation(
            operationId = "getFallback",
            summary = "The kill switch for new fallback attempts: position, who set it, when, why")
    @APIResponse(responseCode = "200", description = "The switch")
    @GET
    public KillSwitch.State fallback() {
        return killSwitch.state();
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
    @Consumes(MediaType.APPLICATION_JSON)
    public KillSwitch.State setFallback(byte[] body) {
        FallbackChange change = bodies.bind(bodies.tree(body), FallbackChange.class);
        if (change.enabled() == null) {
            throw new ProblemException(Problem.INVALID_REQUEST, "'enabled' (true or false) is required.");
        }
        // A reason is required when disabling and checked whenever one is given.
        String reason = !change.enabled() || change.reason() != null ? bodies.reason("reason", change.reason()) : null;
        return killSwitch.set(currentCaller.get().subject(), change.enabled(), reason);
    }
}
