package dev.jobapi.api.rest;

import dev.jobapi.api.security.Caller;
import dev.jobapi.api.security.CurrentCaller;
import dev.jobapi.api.service.ProviderAcceptance;
import dev.jobapi.api.service.Replayable;
import dev.jobapi.common.acceptance.AcceptanceRun;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.List;
import java.util.UUID;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * Operators' endpoints for providers: acceptance runs, and who automatic fallback may pick
 * (docs/design.md, rule 12).
 */
@APIResponse(responseCode = "401", description = "Missing, expired or foreign token (unauthenticated)")
@APIResponse(responseCode = "403", description = "forbidden (operators only)")
@Path("/admin/providers")
@Tag(name = OpenApiContract.OPERATORS_TAG)
@RolesAllowed(Caller.OPERATOR)
@Produces(MediaType.APPLICATION_JSON)
public class ProviderAdminResource {

    private final CurrentCaller currentCaller;
    private final ProviderAcceptance acceptance;

    ProviderAdminResource(CurrentCaller currentCaller, ProviderAcceptance acceptance) {
        this.currentCaller = currentCaller;
        this.acceptance = acceptance;
    }

    @Operation(
            operationId = "listProviders",
            summary = "Every provider: has it earned automatic fallback (and if not, why), and its newest run")
    @APIResponse(responseCode = "200", description = "One entry per configured provider")
    @GET
    public List<ProviderAcceptance.ProviderStatus> providers() {
        return acceptance.statuses();
    }

    @Operation(
            operationId = "requestAcceptance",
            summary = "Run the acceptance fixtures against a provider; a worker runs them and records the result")
    @APIResponse(
            responseCode = "202",
            description = "Requested; Location names the run to follow",
            content = @Content(mediaType = "application/json", schema = @Schema(implementation = AcceptanceRun.class)))
    @APIResponse(
            responseCode = "200",
            description = "A run of this provider is waiting or going already: that run",
            content = @Content(mediaType = "application/json", schema = @Schema(implementation = AcceptanceRun.class)))
    @APIResponse(responseCode = "404", description = "not-found (no such provider)")
    @POST
    @Path("{name}/acceptance")
    public Response requestAcceptance(@PathParam("name") String name) {
        Replayable<AcceptanceRun> run = acceptance.request(currentCaller.get(), name);
        // Relative: an absolute URI would be built from the client's Host header.
        String location =
                "/admin/providers/" + name + "/acceptance/" + run.value().id();
        return Response.status(run.created() ? Response.Status.ACCEPTED : Response.Status.OK)
                .header(HttpHeaders.LOCATION, location)
                .entity(run.value())
                .build();
    }

    @Operation(
            operationId = "getAcceptanceRun",
            summary = "One acceptance run: its state, progress and per-task results")
    @APIResponse(responseCode = "200", description = "The run")
    @APIResponse(responseCode = "404", description = "not-found")
    @GET
    @Path("{name}/acceptance/{runId}")
    public AcceptanceRun run(@PathParam("name") String name, @PathParam("runId") UUID runId) {
        return acceptance.run(name, runId);
    }
}
