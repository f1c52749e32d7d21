package dev.jobapi.api.rest;

import dev.jobapi.api.security.Caller;
import dev.jobapi.api.security.CurrentCaller;
import dev.jobapi.api.service.SpendAdmin;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.math.BigDecimal;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * Operators' money budgets per owner and period, of every provider or of one (docs/design.md, rule
 * 20): read where an owner's budgets stand, set one, remove one. The owner reads their own in GET /me.
 */
@APIResponse(responseCode = "401", description = "Missing, expired or foreign token (unauthenticated)")
@APIResponse(responseCode = "403", description = "forbidden (operators only)")
@Path("/admin/budgets")
@Tag(name = OpenApiContract.OPERATORS_TAG)
@RolesAllowed(Caller.OPERATOR)
@Produces(MediaType.APPLICATION_JSON)
public class BudgetResource {

    /** A budget to set: the limit in US dollars, the soft threshold, and why. */
    public record BudgetChange(
            @Schema(required = true, description = "US dollars per period, at most 6 decimals") BigDecimal limitUsd,
            @Schema(
                            description = "Percent of the limit past which a claim records a budget.threshold event"
                                    + " (default 80)")
                    Integer softPercent,
            @Schema(required = true, description = "Why; audited") String reason) {}

    /** An owner's budgets, each with where it stands in its current period. */
    public record OwnerBudgets(String ownerId, List<SpendAdmin.BudgetView> budgets) {}

    private static final int DEFAULT_SOFT_PERCENT = 80;

    private static final String PROVIDER =
            "The one provider whose calls the budget holds, as configured; absent: the calls to every provider";

    private final CurrentCaller currentCaller;
    private final SpendAdmin spend;
    private final RequestBodies bodies;

    BudgetResource(CurrentCaller currentCaller, SpendAdmin spend, RequestBodies bodies) {
        this.currentCaller = currentCaller;
        this.spend = spend;
        this.bodies = bodies;
    }

    @Operation(
            operationId = "getOwnerBudgets",
            summary = "An owner's money budgets (set for them or the deployment's default; of every provider or of"
                    + " one) with spent, reserved and remaining in the current period")
    @APIResponse(responseCode = "200", description = "The budgets; an empty list when none applies")
    @GET
    @Path("{owner}")
    public OwnerBudgets budgets(@PathParam("owner") String owner) {
        return new OwnerBudgets(owner, spend.budgets(owner));
    }

    @Operation(
            operationId = "setOwnerBudget",
            summary = "Set an owner's money budget for a period (day or month, UTC), of every provider or of the one"
                    + " named; the next claim of theirs is held to it, calls already under way keep their"
                    + " reservations")
    @APIResponse(responseCode = "200", description = "The budget as it stands now")
    @APIResponse(
            responseCode = "400",
            description = "invalid-request (a limit from 0 with at most 6 decimals, softPercent 1-100, a reason)")
    @APIResponse(responseCode = "404", description = "not-found (no such period, or the provider is not configured)")
    @RequestBody(
            content = @Content(mediaType = "application/json", schema = @Schema(implementation = BudgetChange.class)))
    @PUT
    @Path("{owner}/{period}")
    @Consumes(MediaType.APPLICATION_JSON)
    public SpendAdmin.BudgetView set(
            @PathParam("owner") String owner,
            @Parameter(description = "day or month") @PathParam("period") String period,
            @Parameter(description = PROVIDER) @QueryParam("provider") String provider,
            byte[] body) {
        BudgetChange change = bodies.bind(bodies.tree(body), BudgetChange.class);
        return spend.setBudget(
                currentCaller.get().subject(),
                owner,
                period,
                provider,
                change.limitUsd(),
                change.softPercent() == null ? DEFAULT_SOFT_PERCENT : change.softPercent(),
                bodies.reason("reason", change.reason()));
    }

    @Operation(
            operationId = "removeOwnerBudget",
            summary = "Remove an owner's money budget for a period, of every provider (the deployment's default, if"
                    + " any, applies again) or of the one named; calls already under way keep their reservations"
                    + " until they settle")
    @APIResponse(responseCode = "204", description = "Removed")
    @APIResponse(responseCode = "400", description = "invalid-request (a reason is required)")
    @APIResponse(responseCode = "404", description = "not-found (no such period, or no such budget set)")
    @DELETE
    @Path("{owner}/{period}")
    public Response remove(
            @PathParam("owner") String owner,
            @Parameter(description = "day or month") @PathParam("period") String period,
            @Parameter(description = PROVIDER) @QueryParam("provider") String provider,
            @Parameter(description = "Why; audited", required = true) @QueryParam("reason") String reason) {
        spend.removeBudget(currentCaller.get().subject(), owner, period, provider, bodies.reason("reason", reason));
        return Response.noContent().build();
    }
}
