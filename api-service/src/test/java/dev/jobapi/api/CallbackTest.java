package dev.jobapi.api;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import dev.jobapi.api.contract.OutsideTheContract;
import dev.jobapi.api.security.CallbackSignatures;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/**
 * docs/design.md, rule 5, the callback half: a provider's result for an unknown attempt arrives
 * signed, is stored once and announced to the workers; anything unsigned, stale or foreign changes
 * nothing.
 */
@QuarkusTest
class CallbackTest extends ApiTestSupport {

    private static final byte[] SECRET = "test-callback-secret".getBytes(StandardCharsets.UTF_8);

    @Test
    void signedCallbackIsStoredOnceAndAnnouncedToTheWorkers() {
        String attempt = unknownAttemptOfAlice();
        String body = callback(attempt, "{\"promptTokens\":7,\"completionTokens\":11}");

        post("fake-a", signature(Instant.now(), body), body)
                .then()
                .statusCode(202)
                .body("stored", equalTo(true));
        // The provider retries its delivery: acknowledged, nothing changes.
        post("fake-a", signature(Instant.now(), body), body)
                .then()
                .statusCode(200)
                .header("Idempotent-Replayed", "true");

        assertThat(count("SELECT count(*) FROM provider_callback WHERE attempt_id = '" + attempt
                        + "' AND remote_id = 'remote-9' AND prompt_tokens = 7 AND completion_tokens = 11"))
                .isEqualTo(1);
        // The first outbox row announced the attempt at intake; the callback announced it once more.
        assertThat(count("SELECT count(*) FROM outbox WHERE attempt_id = '" + attempt + "'"))
                .isEqualTo(2);
        assertThat(count("SELECT count(*) FROM job_event WHERE kind = 'callback.received'"))
                .isEqualTo(1);
        // Nothing is decided by the API: the attempt stays unknown until a worker reconciles it.
        assertThat(count("SELECT count(*) FROM attempt WHERE id = '" + attempt + "' AND state = 'unknown'"))
                .isEqualTo(1);
    }

    @OutsideTheContract("sends unsigned and forged callbacks")
    @Test
    void unsignedTamperedStaleOrForeignCallbacksAreRefusedAndStoreNothing() {
        String attempt = unknownAttemptOfAlice();
        String body = callback(attempt, null);
        Instant now = Instant.now();

        refused(post("fake-a", null, body), 401, "signature-invalid");
        refused(post("fake-a", "t=123", body), 401, "signature-invalid");
        refused(post("fake-a", "t=abc,v1=zz", body), 401, "signature-invalid");
        refused(post("fake-a", signature(now, body), body.replace("remote-9", "remote-0")), 401, "signature-invalid");
        refused(post("fake-a", signature(now.minus(Duration.ofMinutes(6)), body), body), 401, "signature-expired");
        refused(post("fake-a", signature(now.plus(Duration.ofMinutes(6)), body), body), 401, "signature-expired");
        // fake-b has no callback secret, so no callback endpoint.
        refused(post("fake-b", signature(now, body), body), 404, "not-found");
        // Signed by fake-a, about an attempt fake-a never had.
        String other = callback("0b6f6f6f-0000-4000-8000-000000000000", null);
        refused(post("fake-a", signature(now, other), other), 404, "attempt-not-found");
        String failed = body.replace("\"completed\"", "\"failed\"");
        refused(post("fake-a", signature(now, failed), failed), 422, "callback-unsupported");
        String halfUsage = callback(attempt, "{\"promptTokens\":7}");
        refused(post("fake-a", signature(now, halfUsage), halfUsage), 400, "invalid-request");

        assertThat(count("SELECT count(*) FROM provider_callback")).isZero();
        assertThat(count("SELECT count(*) FROM outbox WHERE attempt_id = '" + attempt + "'"))
                .isEqualTo(1);
    }

    private String unknownAttemptOfAlice() {
        String job = createJob(Tokens.user("alice"), "k-cb", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        execute("UPDATE attempt SET state = 'unknown', reason = 'read timed out', sent_at = now() WHERE job_id = '"
                + job + "'");
        return as(Tokens.user("alice")).get("/jobs/" + job).path("attempts[0].id");
    }

    private static String callback(String attemptId, String usage) {
        return "{\"attemptId\":\"" + attemptId + "\",\"remoteId\":\"remote-9\",\"status\":\"completed\","
                + "\"output\":\"--- a/x\\n+++ b/x\\n\"" + (usage == null ? "" : ",\"usage\":" + usage) + "}";
    }

    private static String signature(Instant at, String body) {
        long t = at.getEpochSecond();
        return "t=" + t + ",v1="
                + HexFormat.of().formatHex(CallbackSignatures.sign(SECRET, t, body.getBytes(StandardCharsets.UTF_8)));
    }

    private static Response post(String provider, String signature, String body) {
        var request = given().contentType(ContentType.JSON).body(body);
        if (signature != null) {
            request.header(CallbackSignatures.HEADER, signature);
        }
        return request.post("/callbacks/" + provider);
    }

    private static void refused(Response response, int status, String code) {
        response.then()
                .statusCode(status)
                .contentType("application/problem+json")
                .body("code", equalTo(code));
    }
}
