package dev.jobapi.api.rest;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.security.Caller;
import dev.jobapi.api.security.CurrentCaller;
import dev.jobapi.api.service.OwnerShares;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/** Operators' setting of an owner's share of the workers: its weight and its cap on calls in flight. */
@APIResponse(responseCode = "401", description = "Missing, expired or foreign token (unauthenticated)")
@APIResponse(responseCode = "403", description = "forbidden (operators only)")
@Path("/admin/owners/{owner}/share")
@Tag(name = OpenApiContract.OPERATORS_TAG)
@RolesAllowed(Caller.OPERATOR)
@Produces(MediaType.APPLICATION_JSON)
public class OwnerShareResource {

    /** A new share, and why. */
    @Schema(name = "OwnerShareChange")
    public record ShareChange(
            @Schema(required = true, minimum = "1", maximum = "100", description = "Jobs per turn at the relay")
                    Integer weight,
            @Schema(nullable = true, minimum = "1", description = "Calls in flight at once; absent: the default")
                    Integer maxInFlight,
            @Schema(required = true, description = "Why; audited") String reason) {}

    private final CurrentCaller currentCaller;
    private final OwnerShares shares;
    private final RequestBodies bodies;

    OwnerShareResource(CurrentCaller currentCaller, OwnerShares shares, RequestBodies bodies) {
        this.currentCaller = currentCaller;
        this.shares = shares;
        this.bodies = bodies;
    }

    @Operation(operationId = "getOwnerShare", summary = "An owner's weight and cap on calls in flight")
    @APIResponse(responseCode = "200", description = "The share; an owner never set has weight 1 and no cap of its own")
    @GET
    public OwnerShares.Share get(@PathParam("owner") String owner) {
        return shares.of(owner);
    }

    @Operation(
            operationId = "setOwnerShare",
            summary = "Set an owner's weight (jobs per relay turn) and cap on calls in flight; audited")
    @APIResponse(responseCode = "200", description = "The share now in force")
    @APIResponse(responseCode = "400", description = "invalid-request (weight 1-100, maxInFlight at least 1, a reason)")
    @RequestBody(
            content = @Content(mediaType = "application/json", schema = @Schema(implementation = ShareChange.class)))
    @PUT
    @Consumes(MediaType.APPLICATION_JSON)
    public OwnerShares.Share set(@PathParam("owner") String owner, byte[] body) {
        ShareChange change = bodies.bind(bodies.tree(body), ShareChange.class);
        if (change.weight() == null) {
            throw new ProblemException(Problem.INVALID_REQUEST, "'weight' is required (1-100).");
        }
        return shares.set(
                currentCaller.get().subject(),
                owner,
                change.weight(),
                change.maxInFlight(),
                bodies.reason("reason", change.reason()));
    }
}
