package dev.jobapi.api;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import dev.jobapi.api.contract.OutsideTheContract;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.BiFunction;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every endpoint against every kind of caller (docs/design.md, rule 10). The job belongs to alice;
 * its first attempt has failed, so a new attempt is allowed for whoever may act on the job. Another
 * owner's job is always 404, never 403 and never its data. The table is repeated in the README.
 */
@QuarkusTest
class AuthorizationMatrixTest extends ApiTestSupport {

    private static final String NONE = "no token";
    private static final String MALFORMED = "malformed token";
    private static final String EXPIRED = "expired token";
    private static final String FOREIGN_KEY = "wrong signature";
    // Signed with our key, each breaking one rule; all carry user and operator roles, so only the
    // broken rule can be what refuses them, even on the operators' endpoints.
    private static final String NO_SUBJECT = "token without sub";
    private static final String EMPTY_SUBJECT = "token with an empty sub";
    private static final String CONTROL_SUBJECT = "token whose sub has a newline";
    private static final String FOREIGN_AUDIENCE = "token for another audience";
    private static final String TOO_LONG_LIVED = "token living longer than 12 h";
    private static final String ISSUED_IN_THE_FUTURE = "token issued in the future";
    private static final String GROUPS_AS_STRING = "groups as one string";
    private static final String OTHER_USER = "another user";
    private static final String OWNER = "owner";
    private static final String REVIEWER = "reviewer";
    private static final String OPERATOR = "operator";

    private static final List<String> CALLERS =
            List.of(NONE, MALFORMED, EXPIRED, FOREIGN_KEY, OTHER_USER, OWNER, REVIEWER, OPERATOR);

    /** Refused like a missing token: each is answered with the status of the "no token" column. */
    private static final List<String> RULE_BREAKING_TOKENS = List.of(
            NO_SUBJECT,
            EMPTY_SUBJECT,
            CONTROL_SUBJECT,
            FOREIGN_AUDIENCE,
            TOO_LONG_LIVED,
            ISSUED_IN_THE_FUTURE,
            GROUPS_AS_STRING);

    /** One endpoint: how to call it on alice's job and attempt, and the status each caller gets. */
    record Endpoint(String name, BiFunction<RequestSpecification, String[], Response> call, int... statuses) {}

    private static final List<Endpoint> ENDPOINTS = List.of(
            //                                                                        none mal  exp  sig other owner rev
            //  op
            new Endpoint("GET /jobs", (r, ids) -> r.get("/jobs"), 401, 401, 401, 401, 200, 200, 200, 200),
            new Endpoint(
                    "POST /jobs",
                    (r, ids) -> r.contentType(ContentType.JSON)
                            .header("Idempotency-Key", UUID.randomUUID().toString())
                            .body(JOB_BODY)
                            .post("/jobs"),
                    401,
                    401,
                    401,
                    401,
                    201,
                    201,
                    201,
                    201),
            new Endpoint(
                    "GET /jobs/{id}", (r, ids) -> r.get("/jobs/" + ids[0]), 401, 401, 401, 401, 404, 200, 200, 200),
            new Endpoint(
                    "POST /jobs/{id}/attempts",
                    (r, ids) -> r.contentType(ContentType.JSON)
                            .header("Idempotency-Key", "matrix")
                            .body("{\"provider\":\"fake-b\"}")
                            .post("/jobs/" + ids[0] + "/attempts"),
                    401,
                    401,
                    401,
                    401,
                    404,
                    201,
                    201,
                    201),
            new Endpoint(
                    "POST /jobs/{id}/cancel",
                    (r, ids) -> r.post("/jobs/" + ids[0] + "/cancel"),
                    401,
                    401,
                    401,
                    401,
                    404,
                    200,
                    200,
                    200),
            new Endpoint(
                    "GET /jobs/{id}/output",
                    (r, ids) -> r.get("/jobs/" + ids[0] + "/output"),
                    401,
                    401,
                    401,
                    401,
                    404,
                    409,
                    409,
                    409),
            new Endpoint(
                    "GET /jobs/{id}/timeline",
                    (r, ids) -> r.get("/jobs/" + ids[0] + "/timeline"),
                    401,
                    401,
                    401,
                    401,
                    404,
                    200,
                    200,
                    200),
            new Endpoint(
                    "GET /admin/fallback",
                    (r, ids) -> r.get("/admin/fallback"),
                    401,
                    401,
                    401,
                    401,
                    403,
                    403,
                    403,
                    200),
            new Endpoint(
                    "PUT /admin/fallback",
                    (r, ids) -> r.contentType(ContentType.JSON)
                            .body("{\"enabled\":true}")
                            .put("/admin/fallback"),
                    401,
                    401,
                    401,
                    401,
                    403,
                    403,
                    403,
                    200),
            new Endpoint("GET /admin/dlq", (r, ids) -> r.get("/admin/dlq"), 401, 401, 401, 401, 403, 403, 403, 200),
            new Endpoint(
                    "POST /admin/dlq/replay",
                    (r, ids) -> r.contentType(ContentType.JSON)
                            .body("{\"ids\":[\"1\"]}")
                            .post("/admin/dlq/replay"),
                    401,
                    401,
                    401,
                    401,
                    403,
                    403,
                    403,
                    200),
            new Endpoint(
                    "GET /admin/quarantine",
                    (r, ids) -> r.get("/admin/quarantine"),
                    401,
                    401,
                    401,
                    401,
                    403,
                    403,
                    403,
                    200),
            new Endpoint(
                    "POST /admin/attempts/{id}/resolve",
                    (r, ids) -> r.contentType(ContentType.JSON)
                            .body("{\"fail\":true,\"reason\":\"matrix\"}")
                            .post("/admin/attempts/" + ids[1] + "/resolve"),
                    401,
                    401,
                    401,
                    401,
                    403,
                    403,
                    403,
                    409),
            new Endpoint("GET /me", (r, ids) -> r.get("/me"), 401, 401, 401, 401, 200, 200, 200, 200),
            new Endpoint("GET /admin/spend", (r, ids) -> r.get("/admin/spend"), 401, 401, 401, 401, 403, 403, 403, 200),
            new Endpoint("GET /admin/audit", (r, ids) -> r.get("/admin/audit"), 401, 401, 401, 401, 403, 403, 403, 200),
            new Endpoint(
                    "GET /admin/providers",
                    (r, ids) -> r.get("/admin/providers"),
                    401,
                    401,
                    401,
                    401,
                    403,
                    403,
                    403,
                    200),
            new Endpoint(
                    "POST /admin/providers/{name}/acceptance",
                    (r, ids) -> r.post("/admin/providers/fake-b/acceptance"),
                    401,
                    401,
                    401,
                    401,
                    403,
                    403,
                    403,
                    202));

    static Stream<Arguments> cells() {
        List<Arguments> cells = new ArrayList<>();
        for (Endpoint endpoint : ENDPOINTS) {
            for (int i = 0; i < CALLERS.size(); i++) {
                cells.add(Arguments.of(endpoint.name(), CALLERS.get(i), endpoint.statuses()[i]));
            }
            for (String caller : RULE_BREAKING_TOKENS) {
                cells.add(Arguments.of(endpoint.name(), caller, endpoint.statuses()[0]));
            }
        }
        return cells.stream();
    }

    private static RequestSpecification request(String caller) throws Exception {
        return switch (caller) {
            case NONE -> given();
            case MALFORMED -> given().header("Authorization", "Bearer not.a.jwt");
            case EXPIRED -> as(Tokens.expired("alice"));
            case FOREIGN_KEY -> as(Tokens.signedWithAnotherKey("alice"));
            case OTHER_USER -> as(Tokens.user("bob"));
            case OWNER -> as(Tokens.user("alice"));
            case REVIEWER -> as(Tokens.reviewer("rita"));
            case OPERATOR -> as(Tokens.of("otto", "operator"));
            case NO_SUBJECT -> as(Tokens.withoutSubject("alice", "user", "operator"));
            case EMPTY_SUBJECT -> as(Tokens.withSubject("", "user", "operator"));
            case CONTROL_SUBJECT -> as(Tokens.withSubject("alice\nforged line", "user", "operator"));
            case FOREIGN_AUDIENCE -> as(Tokens.forAudience("billing-service", "alice"));
            case TOO_LONG_LIVED -> as(Tokens.tooLongLived("alice"));
            case ISSUED_IN_THE_FUTURE -> as(Tokens.issuedInTheFuture("alice"));
            case GROUPS_AS_STRING -> as(Tokens.groupsAsString("alice", "user operator"));
            default -> throw new IllegalArgumentException(caller);
        };
    }

    @OutsideTheContract("asks every endpoint without a token too")
    @ParameterizedTest(name = "{0} as {1} -> {2}")
    @MethodSource("cells")
    void everyEndpointAnswersEveryCallerAsTheTableSays(String endpointName, String caller, int expected)
            throws Exception {
        String jobId = createJob(Tokens.user("alice"), "k-1", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        String attemptId = as(Tokens.user("alice")).get("/jobs/" + jobId).path("attempts[0].id");
        execute("UPDATE attempt SET state = 'failed', reason = 'provider said 400' WHERE id = '" + attemptId + "'");
        Endpoint endpoint = ENDPOINTS.stream()
                .filter(e -> e.name().equals(endpointName))
                .findFirst()
                .orElseThrow();

        Response response = endpoint.call().apply(request(caller), new String[] {jobId, attemptId});

        assertThat(response.statusCode()).as(endpointName + " as " + caller).isEqualTo(expected);
        if (expected >= 400) {
            assertThat(response.contentType()).startsWith("application/problem+json");
            // A refused caller never sees the job's data.
            assertThat(response.asString()).doesNotContain("fix the off-by-one");
        }
    }
}
