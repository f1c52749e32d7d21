package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;

import dev.jobapi.api.contract.OutsideTheContract;
import dev.jobapi.client.CollectedEvents;
import dev.jobapi.client.JobApiClient;
import io.agroal.api.AgroalDataSource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.net.URI;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Push (docs/design.md "Push"): a job's event stream sends its timeline, then each event as it
 * commits (woken by the job change notices through RabbitMQ: the test profile's reread waits longer
 * than any test), resumes after Last-Event-ID, ends after the job's last event and is bounded per
 * caller; the events feed follows an order a cursor never skips in.
 */
@QuarkusTest
class JobEventStreamTest extends ApiTestSupport {

    @Inject
    AgroalDataSource pool;

    private final List<CollectedEvents> opened = new ArrayList<>();

    @AfterEach
    void closeStreams() {
        opened.forEach(CollectedEvents::close);
    }

    @Test
    void aStreamSendsTheTimelineThenEachEventAsItCommitsAndEndsWithTheJob() {
        String job = newJob("alice");
        CollectedEvents stream = open("alice", job, null);
        await().atMost(Duration.ofSeconds(10)).until(() -> stream.kinds().contains("job.created"));

        as(Tokens.user("alice")).post("/jobs/" + job + "/cancel").then().statusCode(200);

        await().atMost(Duration.ofSeconds(10)).until(stream::ended);
        assertThat(stream.kinds()).endsWith("job.cancelled");
        assertThat(stream.cursors()).doesNotHaveDuplicates().isSortedAccordingTo(JobEventStreamTest::byCursor);
        assertThat(stream.kinds()).containsExactlyElementsOf(timelineKinds(job));
    }

    @Test
    void aStreamResumedWithLastEventIdSendsOnlyWhatCameAfter() {
        String job = newJob("alice");
        as(Tokens.user("alice")).post("/jobs/" + job + "/cancel").then().statusCode(200);
        CollectedEvents whole = open("alice", job, null);
        await().atMost(Duration.ofSeconds(10)).until(whole::ended);
        assertThat(whole.cursors()).hasSizeGreaterThan(1);

        CollectedEvents resumed = open("alice", job, whole.cursors().get(0));
        await().atMost(Duration.ofSeconds(10)).until(resumed::ended);
        assertThat(resumed.cursors())
                .isEqualTo(whole.cursors().subList(1, whole.cursors().size()));
    }

    @Test
    void aCallerPastTheStreamBoundIsAnsweredTooManyStreams() {
        for (int i = 0; i < 3; i++) {
            CollectedEvents stream = open("alice", newJob("alice"), null);
            await().atMost(Duration.ofSeconds(10)).until(() -> !stream.kinds().isEmpty());
        }
        String fourth = newJob("alice");

        Response refused = as(Tokens.user("alice")).accept("text/event-stream").get("/jobs/" + fourth + "/events");

        refused.then()
                .statusCode(429)
                .contentType("application/problem+json")
                .header("Retry-After", "2")
                .body("code", equalTo("too-many-streams"))
                .body("retryable", equalTo(true));
        // Another caller's streams are theirs: bob is not refused for alice's.
        CollectedEvents bobs = open("bob", newJob("bob"), null);
        await().atMost(Duration.ofSeconds(10)).until(() -> !bobs.kinds().isEmpty());
    }

    @Test
    void aStreamOfAJobTheCallerMayNotSeeIsNotFound() {
        String job = newJob("alice");
        as(Tokens.user("mallory"))
                .accept("text/event-stream")
                .get("/jobs/" + job + "/events")
                .then()
                .statusCode(404)
                .body("code", equalTo("job-not-found"));
    }

    @Test
    void theFeedNeverSkipsAnEventWhoseTransactionCommittedAfterALaterOnesDid() throws Exception {
        String first = newJob("alice");
        String second = newJob("alice");
        String start = as(Tokens.user("alice"))
                .get("/events")
                .then()
                .statusCode(200)
                .extract()
                .path("next");

        try (Connection early = pool.getConnection();
                Connection late = pool.getConnection()) {
            early.setAutoCommit(false);
            insertEvent(early, first, "early transaction"); // takes the lower transaction id, commits last
            late.setAutoCommit(true);
            insertEvent(late, second, "late transaction");

            Map<String, Object> page = feed(start);
            assertThat(details(page)).doesNotContain("late transaction", "early transaction");
            String next = (String) page.get("next");

            early.commit();
            // Released together once no older transaction runs (a background loop's may, briefly).
            List<String> released =
                    await().atMost(Duration.ofSeconds(10)).until(() -> details(feed(next)), d -> !d.isEmpty());
            assertThat(released).containsExactly("early transaction", "late transaction");
        }
    }

    @Test
    @OutsideTheContract("a cursor that breaks the declared pattern, to see it refused")
    void theFeedHoldsOnlyTheCallersEventsAndRefusesAMalformedCursor() {
        newJob("alice");
        String bobs = newJob("bob");
        // The feed holds an event back while any older transaction still runs (a background loop's
        // included), so the first read may come too early: read until bob's event is released.
        List<String> jobs = await().atMost(Duration.ofSeconds(10))
                .until(
                        () -> as(Tokens.user("bob"))
                                .get("/events")
                                .then()
                                .statusCode(200)
                                .extract()
                                .<List<String>>path("events.jobId"),
                        released -> !released.isEmpty());
        assertThat(jobs).containsOnly(bobs);

        as(Tokens.user("bob"))
                .queryParam("after", "12")
                .get("/events")
                .then()
                .statusCode(400)
                .body("code", equalTo("invalid-query"));
    }

    private Map<String, Object> feed(String after) {
        return as(Tokens.user("alice"))
                .queryParam("after", after)
                .get("/events")
                .then()
                .statusCode(200)
                .extract()
                .jsonPath()
                .getMap("");
    }

    @SuppressWarnings("unchecked")
    private static List<String> details(Map<String, Object> page) {
        return ((List<Map<String, Object>>) page.get("events"))
                .stream()
                        .map(event -> (String) event.get("detail"))
                        .filter(d -> d != null && d.endsWith("transaction"))
                        .toList();
    }

    private static void insertEvent(Connection connection, String job, String detail) throws Exception {
        try (PreparedStatement insert = connection.prepareStatement(
                "INSERT INTO job_event (job_id, at, kind, detail) VALUES (?::uuid, now(), 'job.replayed', ?)")) {
            insert.setString(1, job);
            insert.setString(2, detail);
            insert.executeUpdate();
        }
    }

    private List<String> timelineKinds(String job) {
        return as(Tokens.user("alice"))
                .get("/jobs/" + job + "/timeline")
                .then()
                .extract()
                .path("kind");
    }

    private static int byCursor(String a, String b) {
        String[] x = a.split("-");
        String[] y = b.split("-");
        int byTransaction = Long.compare(Long.parseLong(x[0]), Long.parseLong(y[0]));
        return byTransaction != 0 ? byTransaction : Long.compare(Long.parseLong(x[1]), Long.parseLong(y[1]));
    }

    private String newJob(String owner) {
        return createJob(Tokens.user(owner), "stream-" + UUID.randomUUID(), JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
    }

    private CollectedEvents open(String caller, String job, String lastEventId) {
        JobApiClient client = JobApiClient.builder(URI.create("http://127.0.0.1:" + RestAssured.port))
                .token(Tokens.user(caller))
                .build();
        CollectedEvents stream = new CollectedEvents(client.streamEvents(UUID.fromString(job), lastEventId));
        opened.add(stream);
        return stream;
    }
}
