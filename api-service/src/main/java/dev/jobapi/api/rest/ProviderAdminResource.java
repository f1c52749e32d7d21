package dev.jobapi.api.rest;

import dev.jobapi.api.security.Caller;
import dev.jobapi.api.security.CurrentCaller;
import dev.jobapi.api.service.ProviderAcceptance;
import dev.jobapi.api.service.ProviderPauses;
import dev.jobapi.api.service.Replayable;
import dev.jobapi.common.acceptance.AcceptanceRun;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.Consumes;
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
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
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

    /** The body of a pause or a resume: why, for the audit trail. */
    public record PauseChange(@Schema(required = true, description = "Why; audited") String reason) {}

    private final CurrentCaller currentCaller;
    private final ProviderAcceptance acceptance;
    private final ProviderPauses pauses;
    private final RequestBodies bodies;

    ProviderAdminResource(
            CurrentCaller currentCaller, ProviderAcceptance acceptance, ProviderPauses pauses, RequestBodies bodies) {
        this.currentCaller = currentCaller;
        this.acceptance = acceptance;
        this.pauses = pauses;
        this.bodies = bodies;
    }

    @Operation(
            operationId = "pauseProvider",
            summary = "Pause a provider: its attempts are held (not called, not failed, not dead-lettered) until"
                    + " the resume; a provider already paused stays paused as it was")
    @APIResponse(responseCode = "200", description = "Paused: who, when, why")
    @APIResponse(responseCode = "400", description = "invalid-request (a reason is required)")
    @APIResponse(responseCode = "404", description = "not-found (no such provider)")
    @RequestBody(
            content = @Content(mediaType = "application/json", schema = @Schema(implementation = PauseChange.class)))
    @POST
    @Path("{name}/pause")
    @Consumes(MediaType.APPLICATION_JSON)
    public ProviderPauses.PauseState pause(@PathParam("name") String name, byte[] body) {
        PauseChange change = bodies.bind(bodies.tree(body), PauseChange.class);
        return pauses.pause(currentCaller.get().subject(), name, bodies.reason("reason", change.reason()));
    }

    @Operation(
            operationId = "resumeProvider",
            summary = "Resume a paused provider: its held attempts are announced again and go on where they"
                    + " were; resuming a provider that is not paused changes nothing")
    @APIResponse(responseCode = "200", description = "Not paused; how many held attempts were announced again")
    @APIResponse(responseCode = "400", description = "invalid-request (a reason is required)")
    @APIResponse(responseCode = "404", description = "not-found (no such provider)")
    @RequestBody(
            content = @Content(mediaType = "application/json", schema = @Schema(implementation = PauseChange.class)))
    @POST
    @Path("{name}/resume")
    @Consumes(MediaType.APPLICATION_JSON)
    public ProviderPauses.PauseState resume(@PathParam("name") String name, byte[] body) {
        PauseChange change = bodies.bind(bodies.tree(body), PauseChange.class);
        return pauses.resume(currentCaller.get().subject(), name, bodies.reason("reason", change.reason()));
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
