package dev.jobapi.api.rest;

import dev.jobapi.api.security.Caller;
import dev.jobapi.api.security.CurrentCaller;
import dev.jobapi.api.service.SpendAdmin;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.math.BigDecimal;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * Operators' price table (docs/design.md, rule 20): per provider and model, in US dollars per
 * million tokens, versioned. A claim reserves, and a reported usage is settled, at the price in
 * force when the attempt was claimed.
 */
@APIResponse(responseCode = "401", description = "Missing, expired or foreign token (unauthenticated)")
@APIResponse(responseCode = "403", description = "forbidden (operators only)")
@Path("/admin/prices")
@Tag(name = OpenApiContract.OPERATORS_TAG)
@RolesAllowed(Caller.OPERATOR)
@Produces(MediaType.APPLICATION_JSON)
public class PriceResource {

    /** A new price for one of a provider's models, and why. */
    public record PriceChange(
            @Schema(required = true, description = "The model the provider is configured with") String model,
            @Schema(required = true, description = "US dollars per million prompt tokens")
                    BigDecimal inputUsdPerMillionTokens,
            @Schema(required = true, description = "US dollars per million completion tokens")
                    BigDecimal outputUsdPerMillionTokens,
            @Schema(required = true, description = "Why; audited") String reason) {}

    private final CurrentCaller currentCaller;
    private final SpendAdmin spend;
    private final RequestBodies bodies;

    PriceResource(CurrentCaller currentCaller, SpendAdmin spend, RequestBodies bodies) {
        this.currentCaller = currentCaller;
        this.spend = spend;
        this.bodies = bodies;
    }

    @Operation(operationId = "listPrices", summary = "The price in force for each provider and model")
    @APIResponse(responseCode = "200", description = "One entry per provider and model, by provider and model")
    @GET
    public List<SpendAdmin.Price> prices() {
        return spend.currentPrices();
    }

    @Operation(
            operationId = "setPrice",
            summary = "Set a provider model's price from now on: a new version; attempts claimed before keep the"
                    + " price they were claimed at")
    @APIResponse(responseCode = "200", description = "The new price version")
    @APIResponse(
            responseCode = "400",
            description = "invalid-request (a model, prices from 0 with at most 6 decimals, a reason)")
    @APIResponse(responseCode = "404", description = "not-found (no such provider)")
    @RequestBody(
            content = @Content(mediaType = "application/json", schema = @Schema(implementation = PriceChange.class)))
    @PUT
    @Path("{provider}")
    @Consumes(MediaType.APPLICATION_JSON)
    public SpendAdmin.Price set(@PathParam("provider") String provider, byte[] body) {
        PriceChange change = bodies.bind(bodies.tree(body), PriceChange.class);
        return spend.setPrice(
                currentCaller.get().subject(),
                provider,
                change.model(),
                change.inputUsdPerMillionTokens(),
                change.outputUsdPerMillionTokens(),
                bodies.reason("reason", change.reason()));
    }
}
