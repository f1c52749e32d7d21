package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import dev.jobapi.api.mapping.JobViews;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * docs/design.md, rule 2, and the POST /jobs/{id}/attempts and cancel tables of docs/api.md#jobs.
 */
@QuarkusTest
class AttemptRequestTest extends ApiTestSupport {

    private final String alice = Tokens.user("alice");

    @Test
    void doubleClickOnTryAnotherProviderMakesOneAttempt() throws Exception {
        String id = aliceJobWithFailedFirstAttempt();
        List<CompletableFuture<Response>> clicks = tenAtOnce(id);
        Set<String> attemptIds = new HashSet<>();
        int created = 0;
        for (CompletableFuture<Response> click : clicks) {
            Response response = click.get();
            assertThat(response.statusCode()).isIn(200, 201);
            created += response.statusCode() == 201 ? 1 : 0;
            attemptIds.add(response.path("id"));
        }
        assertThat(attemptIds).hasSize(1);
        assertThat(created).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM attempt WHERE job_id = '" + id + "'"))
                .isEqualTo(2);
        requestAttempt(alice, id, "retry-1", "{\"provider\":\"fake-b\"}")
                .then()
                .statusCode(200)
                .header("Idempotent-Replayed", "true");
        requestAttempt(alice, id, "retry-1", "{\"provider\":\"fake-a\"}")
                .then()
                .statusCode(422)
                .body("code", equalTo("idempotency-key-reused"));
    }

    @Test
    void aJobTakesNoAttemptPastItsBoundNotEvenFromAReviewer() {
        String id = createJob(alice, "k-1", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        for (int attempt = 2; attempt <= 16; attempt++) {
            execute("UPDATE attempt SET state = 'failed', reason = 'provider said 400' WHERE job_id = '" + id
                    + "' AND state = 'starting'");
            requestAttempt(alice, id, "retry-" + attempt, "{\"provider\":\"fake-b\"}")
                    .then()
                    .statusCode(201);
        }
        execute("UPDATE attempt SET state = 'failed', reason = 'provider said 400' WHERE job_id = '" + id
                + "' AND state = 'starting'");

        requestAttempt(alice, id, "retry-17", "{\"provider\":\"fake-b\"}")
                .then()
                .statusCode(409)
                .contentType("application/problem+json")
                .body("code", equalTo("attempt-limit-reached"))
                .body("attempts", equalTo(16))
                .body("limit", equalTo(16));
        requestAttempt(
                        Tokens.reviewer("rita"),
                        id,
                        "retry-18",
                        "{\"provider\":\"fake-b\",\"supersede\":{\"reason\":\"one more\"}}")
                .then()
                .statusCode(409)
                .body("code", equalTo("attempt-limit-reached"));
        // A replay is answered with its attempt, bound or not; the job offers no new attempt.
        requestAttempt(alice, id, "retry-16", "{\"provider\":\"fake-b\"}")
                .then()
                .statusCode(200);
        as(alice).get("/jobs/" + id).then().body("actions", equalTo(List.of("cancel")));
        assertThat(count("SELECT count(*) FROM attempt WHERE job_id = '" + id + "'"))
                .isEqualTo(16);
    }

    @Test
    void fallbackWhileAnAttemptIsStartingNeedsReview() {
        String id = createJob(alice, "k-1", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        requestAttempt(alice, id, "retry-1", "{\"provider\":\"fake-b\"}")
                .then()
                .statusCode(409)
                .contentType("application/problem+json")
                .body("code", equalTo("review-required"));
        assertThat(count("SELECT count(*) FROM attempt")).isEqualTo(1);
    }

    @Test
    void fallbackWhileAnAttemptIsUnknownNeedsReviewAndAReviewerCanSupersede() {
        String id = createJob(alice, "k-1", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        execute("UPDATE attempt SET state = 'unknown', reason = 'read timeout after send' WHERE job_id = '" + id + "'");
        execute("UPDATE job SET state = 'needs_review' WHERE id = '" + id + "'");
        as(alice).get("/jobs/" + id).then().body("actions", equalTo(List.of("cancel")));

        requestAttempt(alice, id, "retry-1", "{\"provider\":\"fake-b\"}")
                .then()
                .statusCode(409)
                .body("code", equalTo("review-required"));
        requestAttempt(alice, id, "retry-2", "{\"provider\":\"fake-b\",\"supersede\":{\"reason\":\"mine\"}}")
                .then()
                .statusCode(403)
                .body("code", equalTo("forbidden"));

        String rita = Tokens.reviewer("rita");
        as(rita).get("/jobs/" + id).then().body("actions", equalTo(List.of("supersede", "cancel")));
        requestAttempt(
                        rita,
                        id,
                        "retry-3",
                        "{\"provider\":\"fake-b\",\"supersede\":{\"reason\":\"provider A timed out at 09:17\"}}")
                .then()
                .statusCode(201)
                .body("state", equalTo("starting"))
                .body("provider", equalTo("fake-b"));
        as(alice)
                .get("/jobs/" + id)
                .then()
                .body("state", equalTo("running"))
                .body("attempts[0].state", equalTo("superseded"))
                .body("attempts[0].reason", equalTo("provider A timed out at 09:17"))
                .body("attempts[0].reviewedBy", equalTo("rita"))
                .body("attempts[1].state", equalTo("starting"));
        assertThat(count("SELECT count(*) FROM outbox")).isEqualTo(2);

        // The reviewer's request sent again is a replay: it supersedes nothing, not even its own attempt.
        requestAttempt(
                        rita,
                        id,
                        "retry-3",
                        "{\"provider\":\"fake-b\",\"supersede\":{\"reason\":\"provider A timed out at 09:17\"}}")
                .then()
                .statusCode(200)
                .header("Idempotent-Replayed", "true");
        as(alice).get("/jobs/" + id).then().body("attempts[1].state", equalTo("starting"));
        assertThat(count("SELECT count(*) FROM outbox")).isEqualTo(2);
    }

    @Test
    void concurrentRetriesOfAKeyWhoseAttemptFailedSinceAreReplaysNeverASecondAttempt() throws Exception {
        String id = aliceJobWithFailedFirstAttempt();
        String made = requestAttempt(alice, id, "retry-1", "{\"provider\":\"fake-b\"}")
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        // Its attempt fails: nothing is open, so the job takes a new attempt, but not under this key.
        execute("UPDATE attempt SET state = 'failed', reason = 'provider said 400' WHERE id = '" + made + "'");
        List<CompletableFuture<Response>> retries = tenAtOnce(id);
        for (CompletableFuture<Response> retry : retries) {
            Response response = retry.get();
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.header("Idempotent-Replayed")).isEqualTo("true");
            assertThat(response.<String>path("id")).isEqualTo(made);
        }
        assertThat(count("SELECT count(*) FROM attempt WHERE job_id = '" + id + "'"))
                .isEqualTo(2);
        assertThat(count("SELECT count(*) FROM outbox")).isEqualTo(2);
        requestAttempt(alice, id, "retry-2", "{\"provider\":\"fake-b\"}").then().statusCode(201);
    }

    @Test
    void aJobAskedAgainAndAgainListsItsNewestAttemptsCountsThemAllAndStillSeesAnOlderOpenOne() {
        String id = aliceJobWithFailedFirstAttempt();
        // The first attempt is still open (its outcome unknown) behind more than a page of failed ones.
        execute("UPDATE attempt SET state = 'unknown', created_at = now() - interval '1 day' WHERE job_id = '" + id
                + "'");
        int failed = JobViews.ATTEMPTS_SHOWN + 5;
        execute("INSERT INTO attempt (id, job_id, provider, state, request_key, reason, created_at,"
                + " updated_at) SELECT gen_random_uuid(), '" + id + "', 'fake-a', 'failed', 'r-' || n,"
                + " 'provider said 400', now() - (" + failed + " - n) * interval '1 minute', now()"
                + " FROM generate_series(1, " + failed + ") AS n");

        Response job = as(alice).get("/jobs/" + id);

        job.then()
                .statusCode(200)
                .body("attempts.size()", equalTo(JobViews.ATTEMPTS_SHOWN))
                .body("attemptsTotal", equalTo(failed + 1));
        // The newest ones, listed oldest of them first.
        assertThat(job.<String>path("attempts[-1].createdAt")).isGreaterThan(job.<String>path("attempts[0].createdAt"));
        // The open attempt is not listed, and still decides the actions: no new attempt while it is open.
        assertThat(job.<List<String>>path("attempts.state")).doesNotContain("unknown");
        assertThat(job.<List<String>>path("actions")).contains("cancel").doesNotContain("request_attempt");
    }

    @Test
    void cancelledJobTakesNoNewAttempts() {
        String id = aliceJobWithFailedFirstAttempt();
        as(alice).post("/jobs/" + id + "/cancel").then().statusCode(200).body("state", equalTo("cancelled"));
        as(alice).post("/jobs/" + id + "/cancel").then().statusCode(200).body("state", equalTo("cancelled"));
        as(alice).get("/jobs/" + id).then().body("actions", equalTo(List.of()));
        requestAttempt(alice, id, "retry-1", "{\"provider\":\"fake-b\"}")
                .then()
                .statusCode(409)
                .body("code", equalTo("job-closed"));
    }

    @Test
    void completedJobCannotBeCancelledAndServesItsOutput() {
        String id = createJob(alice, "k-1", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        as(alice).get("/jobs/" + id + "/output").then().statusCode(409).body("code", equalTo("no-output"));
        String attempt = as(alice).get("/jobs/" + id).path("attempts[0].id");
        execute("INSERT INTO generation (attempt_id, patch, output_digest, created_at) VALUES ('" + attempt
                + "', convert_to('--- a\n+++ b\n', 'UTF8'), 'sha256:abc', now())");
        execute("UPDATE attempt SET state = 'succeeded', output_digest = 'sha256:abc' WHERE id = '" + attempt + "'");
        execute("UPDATE job SET state = 'completed', winning_attempt_id = '" + attempt + "' WHERE id = '" + id + "'");
        as(alice).post("/jobs/" + id + "/cancel").then().statusCode(409).body("code", equalTo("job-closed"));
        as(alice)
                .get("/jobs/" + id + "/output")
                .then()
                .statusCode(200)
                .contentType("text/x-diff")
                .header("ETag", "\"sha256:abc\"")
                .body(equalTo("--- a\n+++ b\n"));
        as(alice).get("/jobs/" + id).then().body("actions", equalTo(List.of("fetch_output")));
    }

    /** Ten requests for another provider on the job under one key, released together. */
    private List<CompletableFuture<Response>> tenAtOnce(String id) {
        CountDownLatch start = new CountDownLatch(1);
        List<CompletableFuture<Response>> requests = IntStream.range(0, 10)
                .mapToObj(i -> CompletableFuture.supplyAsync(() -> {
                    try {
                        start.await();
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                    return requestAttempt(alice, id, "retry-1", "{\"provider\":\"fake-b\"}");
                }))
                .toList();
        start.countDown();
        return requests;
    }
}
