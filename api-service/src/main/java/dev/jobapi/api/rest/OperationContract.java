package dev.jobapi.api.rest;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.common.job.JobState;
import java.math.BigDecimal;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.models.Operation;
import org.eclipse.microprofile.openapi.models.PathItem;
import org.eclipse.microprofile.openapi.models.headers.Header;
import org.eclipse.microprofile.openapi.models.media.Schema;
import org.eclipse.microprofile.openapi.models.parameters.Parameter;
import org.eclipse.microprofile.openapi.models.responses.APIResponse;

/**
 * The operations' parameters and response headers as the resources enforce and send them, for
 * {@link OpenApiContract}: the resources read every parameter as text and check it themselves (so a
 * bad value is a problem naming it, never a framework's 404), which leaves the generated document
 * with bare strings, and set their headers on the response, which the scanner cannot see. A
 * generated client takes its types, its required headers and what it may read back from here.
 */
final class OperationContract {

    /** What {@link IdempotencyKeys} accepts: 1-255 printable ASCII characters, not all spaces. */
    static final String IDEMPOTENCY_KEY_PATTERN = "^[ -~]*[!-~][ -~]*$";

    private OperationContract() {}

    static void describe(String path, PathItem.HttpMethod method, Operation operation) {
        Map<String, APIResponse> responses = operation.getResponses().getAPIResponses();
        if (path.equals("/callbacks/{provider}")) {
            responses.get("200").addHeader(JobResource.REPLAYED, replayed());
        } else if (path.equals("/admin/providers/{name}/acceptance")) {
            String where = "The run to follow: /admin/providers/{name}/acceptance/{runId}";
            responses.get("202").addHeader("Location", header(where, true, uri()));
            responses.get("200").addHeader("Location", header(where, true, uri()));
        }
        if (path.startsWith("/webhooks")) {
            describeWebhooks(path, method, operation);
            return;
        }
        if (!path.startsWith("/jobs")) {
            return;
        }
        if (operation.getParameters() != null) {
            for (Parameter parameter : operation.getParameters()) {
                describe(path, parameter);
            }
        }
        if (method == PathItem.HttpMethod.POST && responses.containsKey("201") && responses.containsKey("200")) {
            // createJob and requestAttempt: a new thing or the replay of the key's.
            responses.get("201").addHeader("Location", header("Where the job is: /jobs/{id}", true, uri()));
            responses.get("200").addHeader(JobResource.REPLAYED, replayed());
        }
        if (path.equals("/jobs/{id}/output")) {
            responses
                    .get("200")
                    .addHeader("ETag", header("The output's digest, quoted: it never changes", true, string()));
        }
        if (method == PathItem.HttpMethod.GET && path.equals("/jobs/{id}")) {
            operation.addParameter(OASFactory.createParameter()
                    .name("If-None-Match")
                    .in(Parameter.In.HEADER)
                    .required(false)
                    .description("The ETag of the job as last seen: 304 with no body while nothing in it changed")
                    .schema(string()));
            String etag = "The SHA-256 of the body, quoted; send it in If-None-Match";
            responses.get("200").addHeader("ETag", header(etag, true, string()));
            responses.get("200").addHeader("Cache-Control", header("no-cache, private", true, string()));
            responses.get("304").addHeader("ETag", header(etag, false, string()));
        }
    }

    private static void describeWebhooks(String path, PathItem.HttpMethod method, Operation operation) {
        if (operation.getParameters() != null) {
            for (Parameter parameter : operation.getParameters()) {
                if (parameter.getIn() == Parameter.In.PATH
                        && parameter.getName().equals("id")) {
                    parameter.description("The endpoint's id").schema(string().format("uuid"));
                } else if (parameter.getIn() == Parameter.In.PATH
                        && parameter.getName().equals("webhookId")) {
                    parameter.description("The delivery's webhook-id").schema(string().pattern("^msg_[0-9a-f]{32}$"));
                } else if (parameter.getIn() == Parameter.In.QUERY
                        && parameter.getName().equals("limit")) {
                    parameter.schema(whole(1, WebhookResource.MAX_DELIVERY_PAGE, WebhookResource.DELIVERY_PAGE));
                }
            }
        }
        if (method == PathItem.HttpMethod.POST && path.equals("/webhooks")) {
            String where = "Where the endpoint is: /webhooks/{id}";
            operation.getResponses().getAPIResponses().get("201").addHeader("Location", header(where, true, uri()));
        }
    }

    private static void describe(String path, Parameter parameter) {
        String name = parameter.getName();
        if (parameter.getIn() == Parameter.In.PATH && name.equals("id")) {
            parameter.description("The job's id").schema(string().format("uuid"));
        } else if (parameter.getIn() == Parameter.In.HEADER && name.equals(JobResource.IDEMPOTENCY_KEY)) {
            parameter
                    .required(true)
                    .description("Your key for this intention: made once (a UUID when the user clicked) and sent"
                            + " again unchanged with every retry of it, never a new one per try. Scoped to you"
                            + (path.equals("/jobs") ? "" : " and the job")
                            + ". The same key with the same body replays (200, Idempotent-Replayed); with another"
                            + " body it is refused (422 " + Problem.IDEMPOTENCY_KEY_REUSED.code() + ").")
                    .schema(string().minLength(1)
                            .maxLength(IdempotencyKeys.MAX_LENGTH)
                            .pattern(IDEMPOTENCY_KEY_PATTERN));
        } else if (parameter.getIn() == Parameter.In.QUERY && path.equals("/jobs")) {
            switch (name) {
                case "limit" -> parameter.schema(whole(1, JobResource.MAX_PAGE, 20));
                case "state" -> parameter.schema(string().enumeration(Arrays.stream(JobState.values())
                        .map(state -> (Object) state.wireName())
                        .toList()));
                default -> {}
            }
        } else if (parameter.getIn() == Parameter.In.QUERY && path.equals("/jobs/{id}/timeline")) {
            switch (name) {
                case "after" -> parameter.schema(whole(0, Long.MAX_VALUE, 0).format("int64"));
                case "limit" -> parameter.schema(whole(1, JobResource.MAX_TIMELINE_PAGE, JobResource.TIMELINE_PAGE));
                default -> {}
            }
        }
    }

    private static Header replayed() {
        return header(
                "Always true: this was answered before (the same key and body); nothing new was made",
                true,
                string().enumeration(List.of("true")));
    }

    private static Header header(String description, boolean required, Schema schema) {
        return OASFactory.createHeader()
                .description(description)
                .required(required)
                .schema(schema);
    }

    private static Schema string() {
        return OASFactory.createSchema().type(List.of(Schema.SchemaType.STRING));
    }

    private static Schema uri() {
        return string().format("uri-reference");
    }

    private static Schema whole(long min, long max, long fallback) {
        return OASFactory.createSchema()
                .type(List.of(Schema.SchemaType.INTEGER))
                .minimum(BigDecimal.valueOf(min))
                .maximum(BigDecimal.valueOf(max))
                .defaultValue(fallback);
    }
}
