package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The served OpenAPI document says what a client generator needs: an operationId per operation,
 * typed request bodies, problem+json on every error, nullable where null comes back, and how
 * callbacks are signed. bin/openapi-lint checks the same document with Redocly's rules.
 */
@QuarkusTest
class OpenApiDocumentTest {

    private JsonNode document;

    @BeforeEach
    void fetch() throws Exception {
        document = new ObjectMapper()
                .readTree(RestAssured.given().get("/q/openapi?format=json").asString());
    }

    private void eachOperation(BiConsumer<String, JsonNode> check) {
        document.path("paths").properties().forEach(path -> path.getValue()
                .properties()
                .forEach(method -> check.accept(method.getKey() + " " + path.getKey(), method.getValue())));
    }

    @Test
    void everyOperationHasItsOwnOperationId() {
        Set<String> ids = new HashSet<>();
        List<String> missing = new ArrayList<>();
        eachOperation((name, operation) -> {
            String id = operation.path("operationId").asText("");
            if (id.isEmpty() || !ids.add(id)) {
                missing.add(name);
            }
        });
        assertThat(missing).as("operations without a unique operationId").isEmpty();
        assertThat(ids).contains("createJob", "requestAttempt", "receiveCallback", "getUsage");
    }

    @Test
    void everyErrorResponseIsProblemJsonWithACode() {
        List<String> wrong = new ArrayList<>();
        eachOperation(
                (name, operation) -> operation.path("responses").properties().forEach(response -> {
                    if (response.getKey().startsWith("4") || response.getKey().startsWith("5")) {
                        String ref = response.getValue()
                                .path("content")
                                .path("application/problem+json")
                                .path("schema")
                                .path("$ref")
                                .asText();
                        if (!ref.equals("#/components/schemas/Problem")) {
                            wrong.add(name + " " + response.getKey());
                        }
                    }
                }));
        assertThat(wrong).isEmpty();
        JsonNode problem = document.path("components").path("schemas").path("Problem");
        assertThat(problem.path("required").toString()).contains("\"code\"");
        assertThat(problem.path("properties").path("code").path("enum").toString())
                .contains("not-i-json", "budget-exceeded", "invalid-query");
    }

    @Test
    void everyOperationDeclaresWhatTheHttpLayerAnswersAndTheBodiesTheirLimits() {
        JsonNode createJob = document.path("paths").path("/jobs").path("post").path("responses");
        for (String status : List.of("400", "401", "406", "408", "413", "414", "415", "422", "429", "431", "500")) {
            assertThat(createJob.has(status))
                    .as("POST /jobs declares " + status)
                    .isTrue();
        }
        JsonNode getJob = document.path("paths").path("/jobs/{id}").path("get").path("responses");
        assertThat(getJob.has("404") && getJob.has("406") && getJob.has("414")).isTrue();
        assertThat(getJob.has("413")).as("no body, no 413").isFalse();
    }

    @Test
    void requestBodiesAreTypedNotBinaryStrings() {
        List<String> untyped = new ArrayList<>();
        eachOperation((name, operation) -> {
            JsonNode schema = operation
                    .path("requestBody")
                    .path("content")
                    .path("application/json")
                    .path("schema");
            if (operation.has("requestBody") && !schema.has("$ref")) {
                untyped.add(name);
            }
        });
        assertThat(untyped).isEmpty();
        JsonNode createJob = document.path("components").path("schemas").path("CreateJob");
        assertThat(createJob.path("required").toString()).contains("\"input\"");
    }

    @Test
    void anAttemptsStateIsOneOfTheFiveStatesClientsKnowAndQuarantineIsAFlag() {
        // Quarantine is a state in the database (V15) but the wire keeps unknown + quarantined: true.
        JsonNode attempt = document.path("components").path("schemas").path("AttemptView");
        assertThat(attempt.path("properties").path("state").path("enum").toString())
                .isEqualTo("[\"starting\",\"succeeded\",\"failed\",\"unknown\",\"superseded\"]");
        assertThat(attempt.path("properties").path("quarantined").path("type").asText())
                .isEqualTo("boolean");
    }

    @Test
    void fieldsThatComeBackNullAreNullable() {
        Map<String, List<String>> nullable = Map.of(
                "JobView", List.of("winningAttemptId", "reviewReason"),
                "AttemptView", List.of("reason", "reviewedBy", "remoteId", "usage"),
                "JobEvent", List.of("attemptId", "detail"),
                "JobPage", List.of("nextCursor"),
                "ProviderStatus", List.of("latestRun", "refusal"));
        List<String> notNullable = new ArrayList<>();
        nullable.forEach((schema, fields) -> fields.forEach(field -> {
            JsonNode property = document.path("components")
                    .path("schemas")
                    .path(schema)
                    .path("properties")
                    .path(field);
            if (!property.toString().contains("\"null\"")) {
                notNullable.add(schema + "." + field);
            }
        }));
        assertThat(notNullable).isEmpty();
    }

    @Test
    void callbacksAreSignedWithTheHmacSchemeAndProblemPagesArePublic() {
        JsonNode callback = document.path("paths").path("/callbacks/{provider}").path("post");
        assertThat(callback.path("security").toString()).isEqualTo("[{\"callbackSignature\":[]}]");
        JsonNode scheme = document.path("components").path("securitySchemes").path("callbackSignature");
        assertThat(scheme.path("type").asText()).isEqualTo("apiKey");
        assertThat(scheme.path("in").asText()).isEqualTo("header");
        assertThat(scheme.path("name").asText()).isEqualTo("Jobapi-Signature");
        assertThat(document.path("paths")
                        .path("/problems/{code}")
                        .path("get")
                        .path("security")
                        .toString())
                .isEqualTo("[]");
        assertThat(document.path("servers").size()).isPositive();
    }

    @Test
    void bothPostsRequireAnIdempotencyKeyConstrainedAsTheApiChecksIt() {
        for (String path : List.of("/jobs", "/jobs/{id}/attempts")) {
            JsonNode key = parameter(document.path("paths").path(path).path("post"), "Idempotency-Key");
            assertThat(key.path("required").asBoolean()).as(path).isTrue();
            assertThat(key.path("description").asText()).as(path).contains("every retry");
            assertThat(key.path("schema").path("minLength").asInt()).isEqualTo(1);
            assertThat(key.path("schema").path("maxLength").asInt()).isEqualTo(255);
            assertThat(key.path("schema").path("pattern").asText()).isEqualTo("^[ -~]*[!-~][ -~]*$");
        }
    }

    @Test
    void everyResponseDeclaresTheHeadersItCarries() {
        List<String> missing = new ArrayList<>();
        eachOperation(
                (name, operation) -> operation.path("responses").properties().forEach(response -> {
                    JsonNode headers = response.getValue().path("headers");
                    if (!headers.has("X-Request-Id")) {
                        missing.add(name + " " + response.getKey() + " X-Request-Id");
                    }
                    if ((response.getKey().equals("429") || response.getKey().equals("503"))
                            && !headers.path("Retry-After").path("required").asBoolean()) {
                        missing.add(name + " " + response.getKey() + " Retry-After");
                    }
                }));
        assertThat(missing).isEmpty();
        JsonNode create = document.path("paths").path("/jobs").path("post").path("responses");
        assertThat(create.path("201").path("headers").has("Location")).isTrue();
        assertThat(create.path("200").path("headers").has("Idempotent-Replayed"))
                .isTrue();
        JsonNode attempt =
                document.path("paths").path("/jobs/{id}/attempts").path("post").path("responses");
        assertThat(attempt.path("201").path("headers").has("Location")).isTrue();
        assertThat(attempt.path("200").path("headers").has("Idempotent-Replayed"))
                .isTrue();
        JsonNode read = document.path("paths").path("/jobs/{id}").path("get");
        assertThat(read.path("responses").path("200").path("headers").has("ETag"))
                .isTrue();
        assertThat(parameter(read, "If-None-Match").path("in").asText()).isEqualTo("header");
        assertThat(document.path("components")
                        .path("schemas")
                        .path("Problem")
                        .path("required")
                        .toString())
                .contains("\"requestId\"", "\"retryable\"");
    }

    @Test
    void jobIdsAreUuidsQueryValuesAreBoundedAndSchemaNamesAreClean() {
        eachOperation((name, operation) -> {
            if (name.contains(" /jobs/{id}")) {
                assertThat(parameter(operation, "id")
                                .path("schema")
                                .path("format")
                                .asText())
                        .as(name)
                        .isEqualTo("uuid");
            }
        });
        JsonNode list = document.path("paths").path("/jobs").path("get");
        assertThat(parameter(list, "limit").path("schema").path("maximum").asInt())
                .isEqualTo(100);
        assertThat(parameter(list, "state").path("schema").path("enum").toString())
                .isEqualTo("[\"accepted\",\"running\",\"needs_review\",\"completed\",\"cancelled\"]");
        List<String> names = new ArrayList<>();
        document.path("components").path("schemas").fieldNames().forEachRemaining(names::add);
        assertThat(names).noneMatch(schema -> schema.matches(".*\\d$"));
    }

    private static JsonNode parameter(JsonNode operation, String name) {
        for (JsonNode parameter : operation.path("parameters")) {
            if (parameter.path("name").asText().equals(name)) {
                return parameter;
            }
        }
        throw new AssertionError("no parameter " + name);
    }
}
