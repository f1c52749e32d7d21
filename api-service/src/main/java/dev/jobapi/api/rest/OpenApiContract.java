package dev.jobapi.api.rest;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemDetails;
import dev.jobapi.api.problem.Problems;
import dev.jobapi.common.tracing.RequestIds;
import io.quarkus.smallrye.openapi.OpenApiFilter;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.OASFilter;
import org.eclipse.microprofile.openapi.models.OpenAPI;
import org.eclipse.microprofile.openapi.models.Operation;
import org.eclipse.microprofile.openapi.models.PathItem;
import org.eclipse.microprofile.openapi.models.media.Content;
import org.eclipse.microprofile.openapi.models.media.Schema;
import org.eclipse.microprofile.openapi.models.parameters.Parameter;
import org.eclipse.microprofile.openapi.models.responses.APIResponse;
import org.eclipse.microprofile.openapi.models.responses.APIResponses;
import org.eclipse.microprofile.openapi.models.security.SecurityRequirement;
import org.eclipse.microprofile.openapi.models.security.SecurityScheme;

/**
 * What the annotations cannot say once per API: the problem+json schema on every error response,
 * the statuses the HTTP layer answers for every operation before a resource runs (UploadGuard,
 * the exception mappers), and the callbacks' HMAC signature scheme. The resources declare their own
 * statuses and bodies; this adds what all of them share.
 */
@OpenApiFilter(OpenApiFilter.RunStage.BUILD)
public class OpenApiContract implements OASFilter {

    static final String PROBLEM_SCHEMA = "Problem";
    static final String SIGNATURE_SCHEME = "callbackSignature";

    /**
     * The tag of the operators' endpoints (fallback switch, dead letters, quarantine, audit). They
     * were one class, named by this tag, before each resource had its own; a generated client names
     * its classes after tags, so they keep the one tag.
     */
    static final String OPERATORS_TAG = "Admin Resource";

    /** The tag of the caller's webhook endpoints. */
    static final String WEBHOOKS_TAG = "Webhooks";

    /** What every operation can answer: refused by the HTTP layer, or our failure. */
    private static final Map<String, String> EVERY_OPERATION = Map.of(
            "406", "not-acceptable: the Accept header names no type this operation produces",
            "414", "uri-too-long: the request target is over 4 KiB",
            "431", "headers-too-large: the headers are over 20 KiB",
            "500", "internal: our failure, logged; retrying with the same Idempotency-Key is safe",
            "503", "server-busy: at capacity (connections, pages, bodies in flight); see Retry-After");

    /** What every operation with a request body can answer besides. */
    private static final Map<String, String> WITH_A_BODY = Map.of(
            "400", "invalid-request, not-i-json: the body is not the JSON this operation takes",
            "408", "request-timeout: the body did not arrive whole within 20 s",
            "413", "payload-too-large: the body is over 1 MiB (a callback's over 256 KiB)",
            "415", "unsupported-media-type: send Content-Type: application/json",
            "429", "too-many-uploads: over 256 bodies in flight per client, or 8 callbacks per provider");

    @Override
    public void filterOpenAPI(OpenAPI openAPI) {
        openAPI.getTags().stream()
                .filter(tag -> tag.getName().equals(OPERATORS_TAG))
                .forEach(tag -> tag.setDescription("Operators' endpoints (role operator): the automatic"
                        + " fallback switch, dead letters, quarantined attempts, provider acceptance and the"
                        + " audit trail. Every change is audited."));
        openAPI.getTags().stream()
                .filter(tag -> tag.getName().equals(WEBHOOKS_TAG))
                .forEach(tag -> tag.setDescription("Your webhook endpoints: each gets your jobs' events of the kinds"
                        + " it wants, signed as Standard Webhooks 1.0 specifies (webhook-id, webhook-timestamp,"
                        + " webhook-signature v1), retried with the same webhook-id until answered 2xx."));
        openAPI.getComponents().addSchema(PROBLEM_SCHEMA, problemSchema());
        openAPI.getComponents()
                .addSecurityScheme(
                        SIGNATURE_SCHEME,
                        OASFactory.createSecurityScheme()
                                .type(SecurityScheme.Type.APIKEY)
                                .in(SecurityScheme.In.HEADER)
                                .name("Jobapi-Signature")
                                .description("t=<unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.<raw body>\" with the"
                                        + " provider's callback secret>; refused outside a 5-minute window."));
        for (Map.Entry<String, PathItem> path :
                openAPI.getPaths().getPathItems().entrySet()) {
            for (Map.Entry<PathItem.HttpMethod, Operation> entry :
                    path.getValue().getOperations().entrySet()) {
                Operation operation = entry.getValue();
                addShared(operation);
                if (path.getKey().startsWith("/callbacks/")) {
                    operation.setSecurity(
                            List.of(OASFactory.createSecurityRequirement().addScheme(SIGNATURE_SCHEME)));
                } else if (path.getKey().startsWith(ProblemTypeResource.PATH)) {
                    // Public pages: an explicitly empty requirement.
                    operation.setSecurity(List.<SecurityRequirement>of());
                }
                problemContent(operation.getResponses());
                OperationContract.describe(path.getKey(), entry.getKey(), operation);
                requestIds(operation);
            }
        }
    }

    /**
     * Every operation takes an optional X-Request-Id and every answer carries one (RequestIdFilter);
     * every 429 and 503 says in Retry-After when to send the request again.
     */
    private static void requestIds(Operation operation) {
        operation.addParameter(OASFactory.createParameter()
                .name(RequestIds.HTTP_HEADER)
                .in(Parameter.In.HEADER)
                .required(false)
                .description("Your id for this request, echoed in the response and its problems and kept in"
                        + " our logs; anything not matching the pattern is replaced by a UUID of ours.")
                .schema(requestIdSchema()));
        for (Map.Entry<String, APIResponse> response :
                operation.getResponses().getAPIResponses().entrySet()) {
            response.getValue()
                    .addHeader(
                            RequestIds.HTTP_HEADER,
                            OASFactory.createHeader()
                                    .description("The request's id: yours when well formed, else ours")
                                    .required(true)
                                    .schema(requestIdSchema()));
            if (response.getKey().equals("429") || response.getKey().equals("503")) {
                response.getValue()
                        .addHeader(
                                Problems.RETRY_AFTER,
                                OASFactory.createHeader()
                                        .description("Seconds to wait before sending the same request again")
                                        .required(true)
                                        .schema(OASFactory.createSchema()
                                                .type(List.of(Schema.SchemaType.INTEGER))
                                                .minimum(java.math.BigDecimal.ONE)));
            }
        }
    }

    private static void addShared(Operation operation) {
        APIResponses responses = operation.getResponses();
        EVERY_OPERATION.forEach((status, description) -> addIfAbsent(responses, status, description));
        if (operation.getRequestBody() != null) {
            WITH_A_BODY.forEach((status, description) -> addIfAbsent(responses, status, description));
        }
    }

    private static void addIfAbsent(APIResponses responses, String status, String description) {
        if (!responses.hasAPIResponse(status)) {
            responses.addAPIResponse(status, OASFactory.createAPIResponse().description(description));
        }
    }

    /** Every 4xx and 5xx answers application/problem+json; the description keeps naming the codes. */
    private static void problemContent(APIResponses responses) {
        for (Map.Entry<String, APIResponse> response :
                responses.getAPIResponses().entrySet()) {
            if (response.getKey().startsWith("4") || response.getKey().startsWith("5")) {
                Content content = OASFactory.createContent()
                        .addMediaType(
                                ProblemDetails.MEDIA_TYPE,
                                OASFactory.createMediaType()
                                        .schema(OASFactory.createSchema().ref(PROBLEM_SCHEMA)));
                response.getValue().setContent(content);
            }
        }
    }

    /** RFC 9457's members with our required {@code code}; more members may follow (a budget's figures). */
    private static Schema problemSchema() {
        return OASFactory.createSchema()
                .type(List.of(Schema.SchemaType.OBJECT))
                .description("RFC 9457 problem details. Clients switch on code; type is an absolute URI whose"
                        + " page describes the problem; detail says what happened this time.")
                .required(List.of("type", "title", "status", "code", "requestId", "retryable"))
                .addProperty(
                        "type",
                        OASFactory.createSchema()
                                .type(List.of(Schema.SchemaType.STRING))
                                .format("uri"))
                .addProperty("title", OASFactory.createSchema().type(List.of(Schema.SchemaType.STRING)))
                .addProperty(
                        "status",
                        OASFactory.createSchema()
                                .type(List.of(Schema.SchemaType.INTEGER))
                                .minimum(java.math.BigDecimal.valueOf(400))
                                .maximum(java.math.BigDecimal.valueOf(599)))
                .addProperty("detail", OASFactory.createSchema().type(List.of(Schema.SchemaType.STRING)))
                .addProperty(
                        "code",
                        OASFactory.createSchema()
                                .type(List.of(Schema.SchemaType.STRING))
                                .enumeration(java.util.Arrays.stream(Problem.values())
                                        .map(p -> (Object) p.code())
                                        .toList()))
                .addProperty(
                        "requestId",
                        requestIdSchema().description("the request's id, as in its X-Request-Id: quote it to support"))
                .addProperty(
                        "retryable",
                        OASFactory.createSchema()
                                .type(List.of(Schema.SchemaType.BOOLEAN))
                                .description("whether the same request, sent again unchanged (the same"
                                        + " Idempotency-Key), may get another answer without anyone acting"
                                        + " first; 429 and 503 say when in Retry-After"))
                .addProperty("budgetTokens", budgetFigure(Schema.SchemaType.INTEGER, "the owner's daily budget"))
                .addProperty(
                        "spentTokensToday",
                        budgetFigure(Schema.SchemaType.INTEGER, "tokens providers reported spent today"))
                .addProperty(
                        "unknownSpendAttemptsToday",
                        budgetFigure(Schema.SchemaType.INTEGER, "today's attempts whose spend is not known yet"))
                .addProperty(
                        "day",
                        budgetFigure(Schema.SchemaType.STRING, "the UTC day counted")
                                .format("date"))
                .addProperty(
                        "period",
                        spendFigure(Schema.SchemaType.STRING, "the budget's period, day or month (UTC)")
                                .enumeration(List.of("day", "month")))
                .addProperty(
                        "provider",
                        spendFigure(Schema.SchemaType.STRING, "the provider whose budget it is; null: every provider's")
                                .type(List.of(Schema.SchemaType.STRING, Schema.SchemaType.NULL)))
                .addProperty(
                        "periodStartsOn",
                        spendFigure(Schema.SchemaType.STRING, "the period's first day")
                                .format("date"))
                .addProperty("limitUsd", spendFigure(Schema.SchemaType.NUMBER, "the budget, US dollars"))
                .addProperty("spentUsd", spendFigure(Schema.SchemaType.NUMBER, "settled cost in the period"))
                .addProperty(
                        "reservedUsd",
                        spendFigure(Schema.SchemaType.NUMBER, "held by calls under way (the most they can cost)"))
                .addProperty(
                        "attempts",
                        extensionMember("attempt-limit-reached", Schema.SchemaType.INTEGER, "the job's attempts"))
                .addProperty(
                        "limit",
                        extensionMember(
                                "attempt-limit-reached",
                                Schema.SchemaType.INTEGER,
                                "the most attempts one job may have"))
                .addProperty(
                        "expected",
                        extensionMember("bulk-set-changed", Schema.SchemaType.INTEGER, "what the dry run counted"))
                .addProperty(
                        "actual",
                        extensionMember("bulk-set-changed", Schema.SchemaType.INTEGER, "what the filter matches now"));
    }

    /** A request id: a client's well-formed X-Request-Id, or the UUID the api minted. */
    static Schema requestIdSchema() {
        return OASFactory.createSchema()
                .type(List.of(Schema.SchemaType.STRING))
                .pattern(RequestIds.PATTERN)
                .maxLength(128);
    }

    /** An extension member of budget-exceeded (StartRefusals): absent from every other problem. */
    private static Schema budgetFigure(Schema.SchemaType type, String what) {
        return extensionMember("budget-exceeded", type, what);
    }

    /** An extension member of spend-budget-exceeded (StartRefusals): absent from every other problem. */
    private static Schema spendFigure(Schema.SchemaType type, String what) {
        return extensionMember("spend-budget-exceeded", type, what);
    }

    /** An extension member of one problem: absent from every other. */
    private static Schema extensionMember(String code, Schema.SchemaType type, String what) {
        return OASFactory.createSchema().type(List.of(type)).description(code + " only: " + what);
    }
}
