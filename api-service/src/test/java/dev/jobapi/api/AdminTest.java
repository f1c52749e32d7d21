package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.notNullValue;

import com.rabbitmq.client.GetResponse;
import dev.jobapi.api.contract.OutsideTheContract;
import dev.jobapi.common.job.JobEventKind;
import dev.jobapi.common.job.JobEvents;
import dev.jobapi.common.message.AttemptTopology;
import dev.jobapi.common.testing.TestBroker;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Operators (docs/design.md, rules 11 and 13): kill switch, dead letters, quarantine, audit,
 * timeline.
 */
@QuarkusTest
class AdminTest extends ApiTestSupport {

    @Inject
    JobEvents events;

    private final String alice = Tokens.user("alice");
    private final String otto = Tokens.of("otto", "operator");

    @Test
    void killSwitchRefusesFallbackAndKeepsTheLedger() {
        String id = aliceJobWithFailedFirstAttempt();
        execute("INSERT INTO usage_record (attempt_id, owner_id, provider, prompt_tokens, completion_tokens, source,"
                + " recorded_at) SELECT id, 'alice', provider, 10, 20, 'provider_reported', now() FROM attempt");
        as(otto).contentType(ContentType.JSON)
                .body("{\"enabled\":false,\"reason\":\"provider B returns garbage\"}")
                .put("/admin/fallback")
                .then()
                .statusCode(200)
                .body("enabled", equalTo(false))
                .body("setBy", equalTo("otto"))
                .body("setAt", notNullValue());

        // The page draws no button the API would refuse.
        as(alice).get("/jobs/" + id).then().statusCode(200).body("actions", equalTo(List.of("cancel")));
        requestAttempt(alice, id, "retry-1", "{\"provider\":\"fake-b\"}")
                .then()
                .statusCode(409)
                .body("code", equalTo("fallback-disabled"))
                .body("detail", org.hamcrest.Matchers.containsString("provider B returns garbage"));
        // Disabling deleted nothing.
        assertThat(count("SELECT count(*) FROM job")).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM attempt")).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM usage_record")).isEqualTo(1);
        as(otto).get("/admin/audit")
                .then()
                .statusCode(200)
                .body("[0].action", equalTo("fallback.disabled"))
                .body("[0].actor", equalTo("otto"))
                .body("[0].reason", equalTo("provider B returns garbage"));

        as(otto).contentType(ContentType.JSON)
                .body("{\"enabled\":true,\"reason\":\"fixed\"}")
                .put("/admin/fallback")
                .then()
                .statusCode(200);
        as(alice)
                .get("/jobs/" + id)
                .then()
                .statusCode(200)
                .body("actions", equalTo(List.of("request_attempt", "cancel")));
        requestAttempt(alice, id, "retry-1", "{\"provider\":\"fake-b\"}").then().statusCode(201);
    }

    @Test
    void onlyOperatorsReachAdminEndpoints() {
        as(alice).get("/admin/fallback").then().statusCode(403);
        as(Tokens.reviewer("rita")).get("/admin/dlq").then().statusCode(403);
        as(alice)
                .contentType(ContentType.JSON)
                .body("{\"enabled\":false,\"reason\":\"x\"}")
                .put("/admin/fallback")
                .then()
                .statusCode(403);
        as(otto).contentType(ContentType.JSON)
                .body("{\"enabled\":false}")
                .put("/admin/fallback")
                .then()
                .statusCode(400)
                .body("code", equalTo("invalid-request"));
    }

    /**
     * Takes the relay's message for the job off the work queue and rejects it into the DLQ, from
     * where the dead-letter mover stores it as a row.
     */
    private void deadLetterTheMessageOf(String jobId) {
        await().atMost(Duration.ofSeconds(10))
                .until(() -> broker.withChannel(channel -> {
                    GetResponse response = channel.basicGet(AttemptTopology.QUEUE, false);
                    if (response == null) {
                        return false;
                    }
                    channel.basicReject(response.getEnvelope().getDeliveryTag(), false);
                    return new String(response.getBody()).contains(jobId);
                }));
    }

    @Test
    void deadLettersAreStoredListedAndReplayedBackToTheWorkQueue() {
        String id = createJob(alice, "k-1", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        String attemptId = as(alice).get("/jobs/" + id).path("attempts[0].id");
        deadLetterTheMessageOf(id);
        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(() -> as(otto).get("/admin/dlq").then().body("items.size()", equalTo(1)));
        String letter = as(otto).get("/admin/dlq")
                .then()
                .statusCode(200)
                .body("depth", equalTo(1))
                .body("items[0].attemptId", equalTo(attemptId))
                .body("items[0].jobId", equalTo(id))
                .body("items[0].reason", equalTo("rejected"))
                .body("items[0].deathCount", equalTo(1))
                .body("items[0].firstDeathAt", notNullValue())
                .extract()
                .path("items[0].id");
        // Listing consumed nothing.
        as(otto).get("/admin/dlq").then().body("items[0].id", equalTo(letter));

        as(otto).contentType(ContentType.JSON)
                .body("{\"ids\":[\"" + letter + "\"]}")
                .post("/admin/dlq/replay")
                .then()
                .statusCode(200)
                .body("replayed", equalTo(1))
                .body("skipped", equalTo(0));
        assertThat(TestBroker.drain(broker, AttemptTopology.DEAD_LETTER_QUEUE)).isEmpty();
        // The replay's outbox row: the relay publishes it, confirmed.
        await().atMost(Duration.ofSeconds(10)).until(() -> TestBroker.drain(broker, AttemptTopology.QUEUE).stream()
                .anyMatch(body -> body.contains(attemptId)));
        as(otto).get("/admin/dlq").then().body("depth", equalTo(0));
        as(otto).get("/admin/dlq?state=replayed").then().body("items[0].settledBy", equalTo("otto"));
        as(otto).get("/admin/audit").then().body("[0].action", equalTo("dlq.replay"));
    }

    @Test
    void replaySkipsMessagesWhoseAttemptHasNothingLeftToDo() {
        String id = createJob(alice, "k-1", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        deadLetterTheMessageOf(id);
        execute("UPDATE attempt SET state = 'failed', reason = 'x' WHERE job_id = '" + id + "'");
        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(() -> as(otto).get("/admin/dlq").then().body("items.size()", equalTo(1)));
        String letter = as(otto).get("/admin/dlq").then().extract().path("items[0].id");
        as(otto).contentType(ContentType.JSON)
                .body("{\"ids\":[\"" + letter + "\"]}")
                .post("/admin/dlq/replay")
                .then()
                .statusCode(200)
                .body("replayed", equalTo(0))
                .body("skipped", equalTo(1));
        assertThat(TestBroker.drain(broker, AttemptTopology.QUEUE)).isEmpty();
    }

    @Test
    void quarantinedAttemptIsListedAndReleasedWithReconciledUsage() {
        String id = createJob(alice, "k-1", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        String attemptId = as(alice).get("/jobs/" + id).path("attempts[0].id");
        execute("INSERT INTO generation (attempt_id, patch, output_digest, created_at) VALUES ('" + attemptId
                + "', convert_to('--- a\n+++ b\n', 'UTF8'), 'sha256:abc', now())");
        execute("UPDATE attempt SET state = 'quarantined', output_digest = 'sha256:abc',"
                + " reason = 'provider reported no usage' WHERE id = '" + attemptId + "'");
        execute("INSERT INTO usage_record (attempt_id, owner_id, provider, source, recorded_at) VALUES ('" + attemptId
                + "', 'alice', 'fake-a', 'unknown', now())");
        as(otto).get("/admin/quarantine")
                .then()
                .statusCode(200)
                .body("id", equalTo(List.of(attemptId)))
                // The wire shows a held attempt as before quarantine became a state: unknown, quarantined.
                .body("[0].state", equalTo("unknown"))
                .body("[0].quarantined", equalTo(true))
                .body("[0].usage.source", equalTo("unknown"));

        // A count no model spends in one request is a typo, refused before anything is written.
        as(otto).contentType(ContentType.JSON)
                .body("{\"usage\":{\"promptTokens\":10000001,\"completionTokens\":40},\"reason\":\"typo\"}")
                .post("/admin/attempts/" + attemptId + "/resolve")
                .then()
                .statusCode(400)
                .body("detail", org.hamcrest.Matchers.containsString("from 0 to 10000000"));
        as(otto).contentType(ContentType.JSON)
                .body(
                        "{\"usage\":{\"promptTokens\":12,\"completionTokens\":40},\"reason\":\"provider invoice line 7\"}")
                .post("/admin/attempts/" + attemptId + "/resolve")
                .then()
                .statusCode(200)
                .body("state", equalTo("unknown"))
                .body("quarantined", equalTo(false));
        assertThat(count("SELECT count(*) FROM usage_record WHERE source = 'provider_reported'"
                        + " AND prompt_tokens = 12 AND completion_tokens = 40"))
                .isEqualTo(1);
        // Announced again, so a worker elects and applies it like any other result.
        assertThat(count("SELECT count(*) FROM outbox WHERE attempt_id = '" + attemptId + "'"))
                .isEqualTo(2);
        as(otto).get("/admin/quarantine").then().body("size()", equalTo(0));
        as(otto).get("/admin/audit").then().body("[0].action", equalTo("attempt.resolve.usage"));
        as(otto).contentType(ContentType.JSON)
                .body("{\"fail\":true,\"reason\":\"again\"}")
                .post("/admin/attempts/" + attemptId + "/resolve")
                .then()
                .statusCode(409)
                .body("code", equalTo("not-quarantined"));
    }

    @Test
    void theAuditTrailRefusesEveryChangeToAWrittenRecordByTheApplicationsRole() {
        as(otto).contentType(ContentType.JSON)
                .body("{\"enabled\":false,\"reason\":\"provider B returns garbage\"}")
                .put("/admin/fallback")
                .then()
                .statusCode(200);
        assertThat(count("SELECT count(*) FROM audit_record")).isEqualTo(1);

        // The tests connect as the services do: these are the application's own statements.
        for (String change : List.of(
                "UPDATE audit_record SET actor = 'mallory'", "DELETE FROM audit_record", "TRUNCATE audit_record")) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> execute(change))
                    .as(change)
                    .hasStackTraceContaining("audit_record is append-only");
        }
        assertThat(count("SELECT count(*) FROM audit_record WHERE actor = 'otto'"))
                .isEqualTo(1);
    }

    @Test
    void quarantineListsAtMostItsLimitTheLongestHeldFirstEachWithItsUsage() {
        List<String> held = new java.util.ArrayList<>();
        for (int i = 0; i < 3; i++) {
            String id = createJob(alice, "held-" + i, JOB_BODY)
                    .then()
                    .statusCode(201)
                    .extract()
                    .path("id");
            String attemptId = as(alice).get("/jobs/" + id).path("attempts[0].id");
            execute("UPDATE attempt SET state = 'quarantined', output_digest = 'sha256:abc', reason = 'no usage',"
                    + " updated_at = now() - interval '" + (10 - i) + " minutes' WHERE id = '" + attemptId + "'");
            execute("INSERT INTO usage_record (attempt_id, owner_id, provider, source, recorded_at) VALUES ('"
                    + attemptId + "', 'alice', 'fake-a', 'unknown', now())");
            held.add(attemptId);
        }

        as(otto).get("/admin/quarantine?limit=2")
                .then()
                .statusCode(200)
                .body("id", equalTo(held.subList(0, 2)))
                .body("usage.source", equalTo(List.of("unknown", "unknown")));
        as(otto).get("/admin/quarantine").then().body("id", equalTo(held));
        as(otto).get("/admin/quarantine?limit=0").then().statusCode(400).body("code", equalTo("invalid-query"));
        as(otto).get("/admin/quarantine?limit=501").then().statusCode(400).body("code", equalTo("invalid-query"));
    }

    @Test
    void quarantinedAttemptFailedByAnOperatorLeavesTheJobToItsOwnerInReviewNotRunning() {
        String id = createJob(alice, "k-1", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        String attemptId = as(alice).get("/jobs/" + id).path("attempts[0].id");
        execute("UPDATE attempt SET state = 'quarantined', reason = 'provider reported no usage'" + " WHERE id = '"
                + attemptId + "'");
        execute("UPDATE job SET state = 'needs_review', review_reason = 'usage missing' WHERE id = '" + id + "'");

        as(otto).contentType(ContentType.JSON)
                .body("{\"fail\":true,\"reason\":\"provider has no record of it\"}")
                .post("/admin/attempts/" + attemptId + "/resolve")
                .then()
                .statusCode(200);
        as(alice)
                .get("/jobs/" + id)
                .then()
                .body("state", equalTo("needs_review"))
                .body(
                        "reviewReason",
                        equalTo("attempt " + attemptId + " failed by operator otto: provider has no"
                                + " record of it; no attempt is left open: ask for another attempt or cancel"))
                .body("actions", equalTo(List.of("request_attempt", "cancel")));
        // The owner's new attempt runs the job again.
        requestAttempt(alice, id, "again-1", "{\"provider\":\"fake-b\"}").then().statusCode(201);
        as(alice).get("/jobs/" + id).then().body("state", equalTo("running"));
    }

    @Test
    void timelineShowsTheJobsHistoryToItsOwnerOnly() {
        String id = createJob(alice, "k-1", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        createJob(alice, "k-1", JOB_BODY).then().statusCode(200);
        as(alice)
                .get("/jobs/" + id + "/timeline")
                .then()
                .statusCode(200)
                .body("kind", equalTo(List.of("job.created", "attempt.requested", "job.replayed")));
        as(Tokens.user("bob")).get("/jobs/" + id + "/timeline").then().statusCode(404);
        as(otto).get("/jobs/" + id + "/timeline").then().statusCode(200);
    }

    @Test
    void timelineShowsEveryKindOfTheCatalogueByItsWireName() {
        String id = createJob(alice, "k-1", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        execute("DELETE FROM job_event WHERE job_id = '" + id + "'");
        QuarkusTransaction.requiringNew().run(() -> {
            for (JobEventKind kind : JobEventKind.values()) {
                events.record(UUID.fromString(id), null, kind, null);
            }
        });
        as(alice)
                .get("/jobs/" + id + "/timeline")
                .then()
                .statusCode(200)
                .body(
                        "kind",
                        equalTo(Arrays.stream(JobEventKind.values())
                                .map(JobEventKind::wireName)
                                .toList()));
    }

    /** One user's retry loop or a long history never makes the timeline a response without bound. */
    @Test
    @OutsideTheContract("asks for limit=1001, past the timeline's declared maximum, to see the api refuse it")
    void aRetryLoopLeavesOneReplayAMinuteOnTheTimelineWhichComesInPages() {
        String id = createJob(alice, "k-1", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        for (int i = 0; i < 30; i++) {
            createJob(alice, "k-1", JOB_BODY).then().statusCode(200);
        }
        assertThat(count("SELECT count(*) FROM job_event WHERE kind = 'job.replayed'"))
                .isEqualTo(1);

        execute("INSERT INTO job_event (job_id, at, kind, detail) SELECT '" + id
                + "', now(), 'test.filler', 'event ' || n FROM generate_series(1, 1200) n");
        List<Object> kinds = new java.util.ArrayList<>();
        String page = "/jobs/" + id + "/timeline";
        int pages = 0;
        while (page != null) {
            io.restassured.response.Response answer = as(alice).get(page);
            answer.then().statusCode(200);
            kinds.addAll(answer.jsonPath().getList("kind"));
            String link = answer.header("Link");
            page = link == null ? null : link.replaceAll("^<([^>]+)>.*$", "$1");
            pages++;
        }
        assertThat(pages).isEqualTo(3); // 500 + 500 + 203
        assertThat(kinds).hasSize(1203).startsWith("job.created", "attempt.requested", "job.replayed");

        as(alice)
                .get("/jobs/" + id + "/timeline?limit=2")
                .then()
                .statusCode(200)
                .header(
                        "Link",
                        org.hamcrest.Matchers.matchesPattern(
                                "</jobs/" + id + "/timeline\\?after=\\d+&limit=2>; ?rel=\"next\""))
                .body("kind", equalTo(List.of("job.created", "attempt.requested")));
        as(alice)
                .get("/jobs/" + id + "/timeline?limit=1001")
                .then()
                .statusCode(400)
                .body("code", equalTo("invalid-query"));
    }

    @Test
    void metricsMoveWithTheWork() {
        double before = metric("jobapi_jobs_created_total");
        double conflictsBefore = metric("jobapi_idempotency_key_conflicts_total");
        createJob(alice, "k-1", JOB_BODY).then().statusCode(201);
        createJob(alice, "k-1", JOB_BODY.replace("off-by-one", "typo")).then().statusCode(422);
        assertThat(metric("jobapi_jobs_created_total")).isEqualTo(before + 1);
        assertThat(metric("jobapi_idempotency_key_conflicts_total")).isEqualTo(conflictsBefore + 1);
        management()
                .get("/q/metrics")
                .then()
                .body(org.hamcrest.Matchers.containsString("jobapi_dlq_depth"))
                .body(org.hamcrest.Matchers.containsString("jobapi_outbox_lag_seconds"))
                .body(org.hamcrest.Matchers.containsString("jobapi_unknown_attempts_open"));
    }

    private static double metric(String name) {
        String text = management().get("/q/metrics").asString();
        return text.lines()
                .filter(line -> line.startsWith(name + " ") || line.startsWith(name + "{"))
                .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
                .sum();
    }
}
