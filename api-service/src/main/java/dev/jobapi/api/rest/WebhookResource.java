package dev.jobapi.api.rest;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.security.Caller;
import dev.jobapi.api.security.CurrentCaller;
import dev.jobapi.api.webhook.WebhookDelivery;
import dev.jobapi.api.webhook.WebhookEndpoint;
import dev.jobapi.api.webhook.WebhookEndpoints;
import dev.jobapi.common.webhook.WebhookDeliveryState;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.List;
import java.util.UUID;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * The caller's webhook endpoints (docs/api.md "Webhooks"): each gets, signed as Standard Webhooks
 * specifies, a delivery per event of the kinds it wants, of the caller's jobs, retried until it is
 * answered 2xx or the deployment's give-up time passes.
 */
@APIResponse(responseCode = "401", description = "Missing, expired or foreign token (unauthenticated)")
@Path("/webhooks")
@Tag(name = OpenApiContract.WEBHOOKS_TAG)
@RolesAllowed({Caller.USER, Caller.REVIEWER, Caller.OPERATOR})
@Produces(MediaType.APPLICATION_JSON)
public class WebhookResource {

    static final int DELIVERY_PAGE = 50;
    static final int MAX_DELIVERY_PAGE = 500;

    /** A new endpoint. */
    @Schema(name = "NewWebhookEndpoint")
    public record NewEndpoint(
            @Schema(
                            required = true,
                            description = "Where deliveries are POSTed: https, on a public address unless the"
                                    + " deployment allows others",
                            maxLength = 2048)
                    String url,
            @Schema(
                            description = "The event kinds wanted, as on the timeline; absent: job.completed,"
                                    + " job.cancelled and job.needs_review")
                    List<String> events,
            @Schema(maxLength = 200) String description) {}

    /** A page of an endpoint's delivery log. */
    @Schema(name = "WebhookDeliveryPage")
    public record DeliveryPage(List<WebhookDelivery> deliveries) {}

    private final CurrentCaller currentCaller;
    private final WebhookEndpoints endpoints;
    private final RequestBodies bodies;

    WebhookResource(CurrentCaller currentCaller, WebhookEndpoints endpoints, RequestBodies bodies) {
        this.currentCaller = currentCaller;
        this.endpoints = endpoints;
        this.bodies = bodies;
    }

    @Operation(
            operationId = "registerWebhook",
            summary = "Register an endpoint; the answer holds its signing secret, shown only here and after a rotation")
    @APIResponse(
            responseCode = "201",
            description = "Registered; Location names it",
            content =
                    @Content(mediaType = "application/json", schema = @Schema(implementation = WebhookEndpoint.class)))
    @APIResponse(responseCode = "400", description = "invalid-request (not an http(s) URL, an unknown event kind)")
    @APIResponse(
            responseCode = "409",
            description = "webhook-exists (you have this url: the detail names it), webhook-limit-reached")
    @APIResponse(
            responseCode = "422",
            description = "webhook-destination-refused (a non-public address, or not https where required)")
    @RequestBody(
            content = @Content(mediaType = "application/json", schema = @Schema(implementation = NewEndpoint.class)))
    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    public Response register(byte[] body) {
        NewEndpoint asked = bodies.bind(bodies.tree(body), NewEndpoint.class);
        WebhookEndpoint endpoint = endpoints.register(
                owner(), new WebhookEndpoints.Registration(asked.url(), asked.events(), asked.description()));
        // Relative, as every Location here: never built from the client's Host header.
        return Response.status(Response.Status.CREATED)
                .header(HttpHeaders.LOCATION, "/webhooks/" + endpoint.id())
                .entity(endpoint)
                .build();
    }

    @Operation(operationId = "listWebhooks", summary = "Your endpoints, oldest first, without their secrets")
    @APIResponse(responseCode = "200", description = "Your endpoints")
    @GET
    public List<WebhookEndpoint> list() {
        return endpoints.list(owner());
    }

    @Operation(operationId = "getWebhook", summary = "One of your endpoints, without its secret")
    @APIResponse(responseCode = "200", description = "The endpoint")
    @APIResponse(responseCode = "404", description = "not-found (no such endpoint of yours)")
    @GET
    @Path("{id}")
    public WebhookEndpoint get(@PathParam("id") String id) {
        return endpoints.get(owner(), endpointId(id));
    }

    @Operation(
            operationId = "deleteWebhook",
            summary = "Delete an endpoint: nothing more is sent to it; its pending deliveries end as failed")
    @APIResponse(responseCode = "204", description = "Deleted")
    @APIResponse(responseCode = "404", description = "not-found (no such endpoint of yours)")
    @DELETE
    @Path("{id}")
    public Response delete(@PathParam("id") String id) {
        endpoints.delete(owner(), endpointId(id));
        return Response.noContent().build();
    }

    @Operation(
            operationId = "rotateWebhookSecret",
            summary = "A new signing secret; the one it replaces keeps signing beside it for the deployment's overlap"
                    + " (24 h by default), so deliveries carry both signatures until then")
    @APIResponse(responseCode = "200", description = "The endpoint, with its new secret")
    @APIResponse(responseCode = "404", description = "not-found (no such endpoint of yours)")
    @POST
    @Path("{id}/rotate-secret")
    public WebhookEndpoint rotateSecret(@PathParam("id") String id) {
        return endpoints.rotateSecret(owner(), endpointId(id));
    }

    @Operation(
            operationId = "testWebhook",
            summary = "Queue a delivery of type webhook.test to the endpoint, signed and retried like any other")
    @APIResponse(
            responseCode = "202",
            description = "Queued; follow it in the delivery log",
            content =
                    @Content(mediaType = "application/json", schema = @Schema(implementation = WebhookDelivery.class)))
    @APIResponse(responseCode = "404", description = "not-found (no such endpoint of yours)")
    @APIResponse(responseCode = "409", description = "webhook-disabled")
    @POST
    @Path("{id}/test")
    public Response sendTest(@PathParam("id") String id) {
        WebhookDelivery delivery = endpoints.sendTest(owner(), endpointId(id));
        return Response.accepted(delivery).build();
    }

    @Operation(operationId = "listWebhookDeliveries", summary = "The endpoint's delivery log, newest first")
    @APIResponse(responseCode = "200", description = "Up to limit deliveries, newest first")
    @APIResponse(responseCode = "400", description = "invalid-query (an unknown state, limit out of range)")
    @APIResponse(responseCode = "404", description = "not-found (no such endpoint of yours)")
    @GET
    @Path("{id}/deliveries")
    public DeliveryPage deliveries(
            @PathParam("id") String id,
            @Parameter(
                            description = "Only deliveries in this state",
                            schema =
                                    @Schema(
                                            type = SchemaType.STRING,
                                            enumeration = {"pending", "delivered", "failed"}))
                    @QueryParam("state")
                    String state,
            @Parameter(
                            description = "Deliveries at most (default 50)",
                            schema = @Schema(minimum = "1", maximum = "500"))
                    @QueryParam("limit")
                    String limitValue) {
        UUID endpoint = endpointId(id);
        if (state != null && WebhookDeliveryState.fromWireName(state).isEmpty()) {
            throw new ProblemException(
                    Problem.INVALID_QUERY, "state must be one of pending, delivered, failed; was '" + state + "'.");
        }
        int limit = (int) QueryValues.whole("limit", limitValue, DELIVERY_PAGE, 1, MAX_DELIVERY_PAGE);
        return new DeliveryPage(endpoints.deliveries(owner(), endpoint, state, limit));
    }

    @Operation(
            operationId = "retryWebhookDelivery",
            summary = "Send a failed delivery again, with the same webhook-id, retried for another give-up period")
    @APIResponse(responseCode = "200", description = "Pending again")
    @APIResponse(responseCode = "404", description = "not-found (no such endpoint of yours, or no such delivery)")
    @APIResponse(responseCode = "409", description = "webhook-delivery-not-failed, webhook-disabled")
    @POST
    @Path("{id}/deliveries/{webhookId}/retry")
    public WebhookDelivery retry(@PathParam("id") String id, @PathParam("webhookId") String webhookId) {
        return endpoints.retry(owner(), endpointId(id), webhookId);
    }

    private String owner() {
        return currentCaller.get().subject();
    }

    /** The path's endpoint id; anything but a UUID names no endpoint. */
    private static UUID endpointId(String id) {
        try {
            return UUID.fromString(id);
        } catch (IllegalArgumentException notAUuid) {
            throw new ProblemException(Problem.NOT_FOUND, "No webhook endpoint has the id '" + id + "'.");
        }
    }
}
