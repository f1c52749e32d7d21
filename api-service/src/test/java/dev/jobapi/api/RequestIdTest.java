package dev.jobapi.api;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;

import com.rabbitmq.client.GetResponse;
import dev.jobapi.api.contract.OutsideTheContract;
import dev.jobapi.api.rest.ProblemMappers;
import dev.jobapi.common.message.AttemptTopology;
import dev.jobapi.common.testing.CapturedLog;
import io.agroal.api.AgroalDataSource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The request id (docs/api.md, "Request ids"): every answer names its request in X-Request-Id and
 * every problem in {@code requestId}, the client's own id when well formed, one of ours otherwise;
 * the request's log lines carry it, and so does the message its outbox row becomes, for the worker.
 */
@QuarkusTest
class RequestIdTest extends ApiTestSupport {

    private static final String UUID_PATTERN = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

    @Inject
    AgroalDataSource pool;

    @Test
    void aWellFormedIdFromTheClientIsAnsweredInTheHeaderAndInTheProblem() {
        as(Tokens.user("alice"))
                .header("X-Request-Id", "ticket-4711:retry.2")
                .get("/jobs/" + UUID.randomUUID())
                .then()
                .statusCode(404)
                .header("X-Request-Id", "ticket-4711:retry.2")
                .body("requestId", equalTo("ticket-4711:retry.2"))
                .body("retryable", equalTo(false));
    }

    @Test
    @OutsideTheContract("an X-Request-Id that breaks the declared pattern, to see it replaced")
    void anIllFormedIdIsReplacedByOneTheApiMints() {
        Response answer = as(Tokens.user("alice"))
                .header("X-Request-Id", "two words\u00e9" + "x".repeat(130))
                .contentType(ContentType.JSON)
                .body(JOB_BODY)
                .post("/jobs");
        answer.then().statusCode(400).body("code", equalTo("idempotency-key-missing"));
        assertThat(answer.header("X-Request-Id")).matches(UUID_PATTERN);
        assertThat(answer.<String>path("requestId")).isEqualTo(answer.header("X-Request-Id"));
    }

    @Test
    void successesAndTheGuardsRefusalsCarryAnIdToo() {
        Response created = createJob(Tokens.user("alice"), "k-1", JOB_BODY);
        created.then().statusCode(201);
        assertThat(created.header("X-Request-Id")).matches(UUID_PATTERN);

        // Answered by UploadGuard on the event loop, before any resource runs.
        Response refused = given().header("Authorization", "Bearer not-a-token")
                .header("X-Request-Id", "guarded-1")
                .header("Idempotency-Key", "k-2")
                .contentType(ContentType.JSON)
                .body(JOB_BODY)
                .post("/jobs");
        refused.then().statusCode(401).header("X-Request-Id", "guarded-1").body("requestId", equalTo("guarded-1"));

        assertThat(given().get("/problems").header("X-Request-Id")).matches(UUID_PATTERN);
    }

    @Test
    @OutsideTheContract("the 503 of a pool whose every connection the test holds")
    void theLogLineOfARequestCarriesItsIdAndItsShedAnswerSaysRetryAfter() throws Exception {
        CapturedLog log = CapturedLog.of(ProblemMappers.class);
        List<Connection> taken = new ArrayList<>();
        try {
            for (int i = 0; i < 20; i++) {
                taken.add(pool.getConnection());
            }
            as(Tokens.user("alice"))
                    .header("X-Request-Id", "shed-1")
                    .get("/jobs/" + UUID.randomUUID())
                    .then()
                    .statusCode(503)
                    .header("Retry-After", "2")
                    .header("X-Request-Id", "shed-1")
                    .body("code", equalTo("server-busy"))
                    .body("retryable", equalTo(true))
                    .body("requestId", equalTo("shed-1"));
        } finally {
            for (Connection connection : taken) {
                connection.close();
            }
            log.close();
        }
        assertThat(log.lines())
                .filteredOn(line -> line.getFormattedMessage().contains("answered 503 server-busy"))
                .singleElement()
                .satisfies(line -> assertThat(line.getMdc("requestId")).isEqualTo("shed-1"));
    }

    @Test
    void theOutboxRowAndItsMessageCarryTheRequestIdForTheWorker() {
        String id = as(Tokens.user("alice"))
                .header("X-Request-Id", "submit-7")
                .header("Idempotency-Key", "k-7")
                .contentType(ContentType.JSON)
                .body(JOB_BODY)
                .post("/jobs")
                .then()
                .statusCode(201)
                .header("X-Request-Id", "submit-7")
                .extract()
                .path("id");
        assertThat(em.createNativeQuery("SELECT request_id FROM outbox WHERE job_id = CAST(?1 AS uuid)")
                        .setParameter(1, id)
                        .getResultList())
                .containsExactly("submit-7");
        String carried = await().atMost(Duration.ofSeconds(10))
                .until(
                        () -> broker.<String>withChannel(channel -> {
                            GetResponse message = channel.basicGet(AttemptTopology.QUEUE, true);
                            return message == null
                                    ? null
                                    : String.valueOf(
                                            message.getProps().getHeaders().get("x-request-id"));
                        }),
                        java.util.Objects::nonNull);
        assertThat(carried).isEqualTo("submit-7");
    }
}
