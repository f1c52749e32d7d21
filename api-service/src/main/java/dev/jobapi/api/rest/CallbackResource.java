package dev.jobapi.api.rest;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.security.CallbackSignatures;
import dev.jobapi.api.security.Subjects;
import dev.jobapi.api.service.CallbackIntake;
import dev.jobapi.common.attempt.UsageRecord;
import dev.jobapi.common.callback.ProviderCallback;
import jakarta.annotation.security.PermitAll;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.UUID;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;

/**
 * Where providers that call back deliver a result we may have lost (docs/design.md, rule 5). No
 * bearer token: the provider proves itself with an HMAC over the body (see {@link
 * CallbackSignatures}).
 */
@Path("/callbacks")
@PermitAll
@Produces(MediaType.APPLICATION_JSON)
public class CallbackResource {

    /** Body of a callback: our attempt id, the provider's id and its result. */
    public record Callback(String attemptId, String remoteId, String status, String output, Usage usage) {}

    /** Token counts as the provider reports them; absent when it reports none. */
    @Schema(name = "CallbackUsage")
    public record Usage(Integer promptTokens, Integer completionTokens) {}

    /** What the callback led to. */
    public record Receipt(UUID attemptId, boolean stored) {}

    private final CallbackSignatures signatures;
    private final RequestBodies bodies;
    private final CallbackIntake intake;

    CallbackResource(CallbackSignatures signatures, RequestBodies bodies, CallbackIntake intake) {
        this.signatures = signatures;
        this.bodies = bodies;
        this.intake = intake;
    }

    @Operation(
            operationId = "receiveCallback",
            summary = "A provider's signed result for one of our attempts; reconciled like a lookup")
    @APIResponse(
            responseCode = "202",
            description = "Stored; a worker reconciles the attempt from it",
            content = @Content(mediaType = "application/json", schema = @Schema(implementation = Receipt.class)))
    @APIResponse(
            responseCode = "200",
            description = "This attempt's callback was stored before: Idempotent-Replayed",
            content = @Content(mediaType = "application/json", schema = @Schema(implementation = Receipt.class)))
    @APIResponse(responseCode = "400", description = "invalid-request")
    @APIResponse(responseCode = "401", description = "signature-invalid, signature-expired")
    @APIResponse(responseCode = "404", description = "not-found (no callbacks for this provider), attempt-not-found")
    @APIResponse(responseCode = "422", description = "callback-unsupported (a status other than completed)")
    @RequestBody(
            content =
                    @Content(
                            mediaType = "application/json",
                            schema = @Schema(implementation = Callback.class),
                            examples =
                                    @ExampleObject(
                                            name = "example",
                                            value =
                                                    "{\"attemptId\":\"5f0c...\",\"remoteId\":\"chatcmpl-42\",\"status\":\"completed\",\"output\":\"--- a/x\\n+++ b/x\\n...\",\"usage\":{\"promptTokens\":12,\"completionTokens\":40}}")))
    @POST
    @Path("{provider}")
    @Consumes(MediaType.APPLICATION_JSON)
    public Response receive(
            @PathParam("provider") String provider,
            @HeaderParam(CallbackSignatures.HEADER) String signature,
            byte[] body) {
        // Verify before parsing: nothing unsigned is even read.
        Instant signedAt = signatures.verify(provider, signature, body);
        Callback callback = bodies.bind(bodies.tree(body), Callback.class);
        if (!"completed".equals(callback.status())) {
            throw new ProblemException(
                    Problem.CALLBACK_UNSUPPORTED,
                    "Only 'completed' callbacks carry a result; got status '" + callback.status() + "'.");
        }
        UUID attemptId = attemptId(callback.attemptId());
        if (callback.remoteId() != null && !Subjects.isUsable(callback.remoteId())) {
            throw new ProblemException(
                    Problem.INVALID_REQUEST, "'remoteId' must be 1-255 characters without control characters.");
        }
        if (callback.output() == null) {
            throw new ProblemException(Problem.INVALID_REQUEST, "'output' (the patch text) is required.");
        }
        Usage usage = callback.usage();
        boolean usageWhole = usage != null && usage.promptTokens() != null && usage.completionTokens() != null;
        if (usage != null
                && (!usageWhole
                        || !UsageRecord.isPlausible(usage.promptTokens())
                        || !UsageRecord.isPlausible(usage.completionTokens()))) {
            throw new ProblemException(
                    Problem.INVALID_REQUEST,
                    "'usage' needs promptTokens and completionTokens, both from 0 to " + UsageRecord.MAX_TOKENS + ".");
        }
        boolean stored = intake.accept(new ProviderCallback(
                attemptId,
                provider,
                callback.remoteId(),
                callback.output().getBytes(StandardCharsets.UTF_8),
                usageWhole ? usage.promptTokens() : null,
                usageWhole ? usage.completionTokens() : null,
                signedAt));
        if (!stored) {
            return Response.ok(new Receipt(attemptId, false))
                    .header(JobResource.REPLAYED, "true")
                    .build();
        }
        return Response.accepted(new Receipt(attemptId, true)).build();
    }

    private static UUID attemptId(String value) {
        try {
            return UUID.fromString(value == null ? "" : value);
        } catch (IllegalArgumentException e) {
            throw new ProblemException(Problem.INVALID_REQUEST, "'attemptId' must be one of our attempt ids (a UUID).");
        }
    }
}
