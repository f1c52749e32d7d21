package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The write that adds an outbox row signals the relay after its commit (issue 35, item 3): with
 * the relay's poll an hour away, a row leaves within seconds only because its commit woke the
 * relay. The resources do not know the relay exists; an operator's release from quarantine, which
 * the poll alone used to carry, wakes it the same way.
 */
@QuarkusTest
@TestProfile(OutboxSignalTest.HourlyPoll.class)
class OutboxSignalTest extends ApiTestSupport {

    /** The relay polls once an hour, so only a commit's signal moves a row within the test. */
    public static class HourlyPoll implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("jobapi.outbox.poll-interval", "1h");
        }
    }

    private static final Duration WELL_BEFORE_THE_POLL = Duration.ofSeconds(10);

    private final String alice = Tokens.user("alice");
    private final String otto = Tokens.of("otto", "operator");

    @Test
    void aNewJobsAnnouncementLeavesAtOnceThoughThePollIsAnHourAway() {
        String id = createJob(alice, "signal-1", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");

        await().atMost(WELL_BEFORE_THE_POLL)
                .until(() ->
                        count("SELECT count(*) FROM outbox WHERE job_id = '" + id + "' AND sent_at IS NOT NULL") == 1);
    }

    @Test
    void anOperatorsReleaseFromQuarantineWakesTheRelay() {
        String id = createJob(alice, "signal-2", JOB_BODY)
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
        await().atMost(WELL_BEFORE_THE_POLL)
                .until(() -> count("SELECT count(*) FROM outbox WHERE attempt_id = '" + attemptId
                                + "' AND sent_at IS NOT NULL")
                        == 1);

        as(otto).contentType(ContentType.JSON)
                .body("{\"usage\":{\"promptTokens\":12,\"completionTokens\":40},\"reason\":\"invoice line 7\"}")
                .post("/admin/attempts/" + attemptId + "/resolve")
                .then()
                .statusCode(200);

        assertThat(count("SELECT count(*) FROM outbox WHERE attempt_id = '" + attemptId + "'"))
                .isEqualTo(2);
        await().atMost(WELL_BEFORE_THE_POLL)
                .until(() -> count("SELECT count(*) FROM outbox WHERE attempt_id = '" + attemptId
                                + "' AND sent_at IS NOT NULL")
                        == 2);
    }
}
