package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import dev.jobapi.api.bulk.BulkActions;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.response.ValidatableResponse;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Bulk actions by filter (issue 30; docs/design.md, "Bulk actions"): the dry run's count is what the
 * execution changes, a set that changed since refuses the token (409), each item's change commits
 * with its audit record or neither does, an interrupted action resumes where it stopped, a replay
 * skips what the ledger says is done, and the single actions' checks (the kill switch, the state
 * machine) still refuse items.
 */
@QuarkusTest
class BulkActionTest extends ApiTestSupport {

    @Inject
    BulkActions bulk;

    private final String alice = Tokens.user("alice");
    private final String bob = Tokens.user("bob");
    private final String otto = Tokens.of("otto", "operator");

    // ------------------------------------------------------------------ dead letters

    @Test
    void dryRunCountIsWhatTheReplayChangesAndTheReplaySkipsWhatTheLedgerSaysIsDone() {
        UUID open = aliceAttempt("k-1");
        UUID settled = aliceAttempt("k-2");
        UUID other = aliceAttempt("k-3");
        storedDeadLetters(open, 2, "fake-b");
        storedDeadLetters(settled, 1, "fake-b");
        storedDeadLetters(other, 3, "fake-a");
        execute("UPDATE attempt SET state = 'failed', reason = 'provider said 400' WHERE id = '" + settled + "'");
        long outbox = count("SELECT count(*) FROM outbox");
        long settledsOutbox = count("SELECT count(*) FROM outbox WHERE attempt_id = '" + settled + "'");

        Response dryRun = dryRun("dlq-replay", "{\"filter\":{\"provider\":\"fake-b\"}}");
        dryRun.then().statusCode(200).body("count", equalTo(3)).body("sample.size()", equalTo(3));
        assertThat(count("SELECT count(*) FROM dead_letter WHERE settlement IS NOT NULL"))
                .isZero();

        execute("dlq-replay", "{\"filter\":{\"provider\":\"fake-b\"},\"token\":\"" + dryRun.path("token") + "\"}")
                .then()
                .statusCode(200)
                .body("state", equalTo("done"))
                .body("total", equalTo(3))
                .body("processed", equalTo(3))
                .body("done", equalTo(2))
                .body("skipped", equalTo(1));
        assertThat(count("SELECT count(*) FROM dead_letter WHERE provider = 'fake-b' AND settlement IS NOT NULL"))
                .isEqualTo(3);
        assertThat(count("SELECT count(*) FROM dead_letter WHERE attempt_id = '" + settled
                        + "' AND settlement = 'skipped'"))
                .isEqualTo(1);
        assertThat(count("SELECT count(*) FROM dead_letter WHERE provider = 'fake-a' AND settlement IS NULL"))
                .isEqualTo(3);
        // Only the attempt with work left is announced again; the ledger's settled one is not.
        assertThat(count("SELECT count(*) FROM outbox")).isEqualTo(outbox + 2);
        assertThat(count("SELECT count(*) FROM outbox WHERE attempt_id = '" + settled + "'"))
                .isEqualTo(settledsOutbox);
    }

    @Test
    void aSetThatChangedSinceTheDryRunRefusesItsToken() {
        UUID attempt = aliceAttempt("k-1");
        storedDeadLetters(attempt, 3, "fake-a");
        String token =
                dryRun("dlq-discard", "{\"filter\":{\"owner\":\"alice\"}}").path("token");

        // Same count, another set: one discarded by id, one new.
        as(otto).contentType(ContentType.JSON)
                .body("{\"ids\":[\"" + count("SELECT min(id) FROM dead_letter") + "\"],\"reason\":\"one by hand\"}")
                .post("/admin/dlq/discard")
                .then()
                .statusCode(200);
        storedDeadLetters(attempt, 1, "fake-a");
        execute("dlq-discard", "{\"filter\":{\"owner\":\"alice\"},\"token\":\"" + token + "\",\"reason\":\"noise\"}")
                .then()
                .statusCode(409)
                .contentType("application/problem+json")
                .body("code", equalTo("bulk-set-changed"))
                .body("expected", equalTo(3))
                .body("actual", equalTo(3));
        assertThat(count("SELECT count(*) FROM dead_letter WHERE settlement IS NULL"))
                .isEqualTo(3);
        assertThat(count("SELECT count(*) FROM bulk_action")).isZero();
        assertThat(count("SELECT count(*) FROM bulk_action_item")).isZero();

        // A fresh dry run's token is taken.
        String fresh =
                dryRun("dlq-discard", "{\"filter\":{\"owner\":\"alice\"}}").path("token");
        execute("dlq-discard", "{\"filter\":{\"owner\":\"alice\"},\"token\":\"" + fresh + "\",\"reason\":\"noise\"}")
                .then()
                .statusCode(200)
                .body("done", equalTo(3));
    }

    @Test
    void anExecutionNeedsItsDryRunsTokenForThisActionAndFilter() {
        UUID attempt = aliceAttempt("k-1");
        storedDeadLetters(attempt, 1, "fake-a");
        String token =
                dryRun("dlq-replay", "{\"filter\":{\"owner\":\"alice\"}}").path("token");
        execute("dlq-replay", "{\"filter\":{\"owner\":\"alice\"}}")
                .then()
                .statusCode(400)
                .body("code", equalTo("invalid-request"))
                .body("detail", containsString("token"));
        execute("dlq-replay", "{\"filter\":{\"owner\":\"bob\"},\"token\":\"" + token + "\"}")
                .then()
                .statusCode(400)
                .body("detail", containsString("not of this action and filter"));
        execute("dlq-discard", "{\"filter\":{\"owner\":\"alice\"},\"token\":\"" + token + "\",\"reason\":\"x\"}")
                .then()
                .statusCode(400);
        String tampered = token.substring(0, token.indexOf('.') - 2) + "AA" + token.substring(token.indexOf('.'));
        execute("dlq-replay", "{\"filter\":{\"owner\":\"alice\"},\"token\":\"" + tampered + "\"}")
                .then()
                .statusCode(400)
                .body("detail", containsString("not a dry run's token"));
        dryRun("no-such-action", "{}").then().statusCode(404);
        dryRun("dlq-replay", "{\"filter\":{\"since\":\"yesterday\"}}")
                .then()
                .statusCode(400)
                .body("code", equalTo("invalid-request"));
        dryRun("job-cancel", "{\"filter\":{\"state\":\"lost\"}}").then().statusCode(400);
        dryRun("dlq-replay", "{\"filter\":{\"state\":\"running\"}}").then().statusCode(400);
        as(alice)
                .contentType(ContentType.JSON)
                .body("{}")
                .post("/admin/bulk/dlq-replay/dry-run")
                .then()
                .statusCode(403);
        assertThat(count("SELECT count(*) FROM dead_letter WHERE settlement IS NULL"))
                .isEqualTo(1);
    }

    @Test
    void eachBatchCommitsWithItsAuditRecordOrNeitherAndAnInterruptedActionResumesWhereItStopped() {
        UUID attempt = aliceAttempt("k-1");
        int letters = 1_200;
        storedDeadLetters(attempt, letters, "fake-a");
        long outbox = count("SELECT count(*) FROM outbox");
        // The second batch's audit record fails: its settlements must roll back with it.
        execute("CREATE OR REPLACE FUNCTION test_refuse_second_batch() RETURNS trigger LANGUAGE plpgsql AS"
                + " $$ BEGIN IF NEW.action = 'dlq.replay' AND"
                + " (SELECT count(*) FROM dead_letter WHERE settlement IS NOT NULL) > 500"
                + " THEN RAISE EXCEPTION 'audit refused by the test'; END IF; RETURN NEW; END $$");
        execute("CREATE TRIGGER test_refuse_second_batch BEFORE INSERT ON audit_record"
                + " FOR EACH ROW EXECUTE FUNCTION test_refuse_second_batch()");
        String id;
        try {
            String token = dryRun("dlq-replay", "{}").path("token");
            id = execute("dlq-replay", "{\"token\":\"" + token + "\"}")
                    .then()
                    .statusCode(202)
                    .header("Location", containsString("/admin/bulk/"))
                    .body("state", equalTo("running"))
                    .body("total", equalTo(letters))
                    .extract()
                    .path("id");
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> count("SELECT count(*) FROM dead_letter WHERE settlement IS NOT NULL") == 500);
            // Rounds keep failing at the second batch: nothing of it is left half done.
            await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10)).until(() -> true);
            assertThat(count("SELECT count(*) FROM dead_letter WHERE settlement IS NOT NULL"))
                    .isEqualTo(500);
            assertThat(count("SELECT count(*) FROM bulk_action_item WHERE outcome IS NOT NULL"))
                    .isEqualTo(500);
            assertThat(count("SELECT count(*) FROM outbox")).isEqualTo(outbox + 500);
            assertThat(count("SELECT count(*) FROM audit_record WHERE action = 'dlq.replay'"))
                    .isEqualTo(1);
            as(otto).get("/admin/bulk/" + id).then().statusCode(200).body("processed", equalTo(500));
        } finally {
            execute("DROP TRIGGER test_refuse_second_batch ON audit_record");
        }
        await().atMost(Duration.ofSeconds(30))
                .until(() -> "done".equals(as(otto).get("/admin/bulk/" + id).path("state")));
        as(otto).get("/admin/bulk/" + id).then().body("done", equalTo(letters)).body("processed", equalTo(letters));
        assertThat(count("SELECT count(*) FROM outbox")).isEqualTo(outbox + letters);
        assertThat(count("SELECT count(*) FROM dead_letter WHERE settlement = 'replayed'"))
                .isEqualTo(letters);
        assertThat(count("SELECT count(*) FROM audit_record WHERE action = 'dlq.replay'"))
                .isEqualTo(3);
        assertThat(count("SELECT count(*) FROM audit_record WHERE action = 'bulk.dlq-replay'"))
                .isEqualTo(1);
        as(otto).get("/admin/bulk").then().statusCode(200).body("[0].id", equalTo(id));
    }

    @Test
    void tenThousandDeadLettersAreReplayedByFilterInTimeLinearInTheirNumber() {
        UUID attempt = aliceAttempt("k-1");
        storedDeadLetters(attempt, 2_500, "fake-a");
        long small = timedReplay("fake-a", 2_500);
        storedDeadLetters(attempt, 10_000, "fake-b");
        storedDeadLetters(attempt, 1_000, "fake-anthropic");
        long large = timedReplay("fake-b", 10_000);
        System.out.printf(
                "bulk replay: 2,500 dead letters in %d ms (%.0f/s); 10,000 in %d ms (%.0f/s)%n",
                small, 2_500 * 1000.0 / small, large, 10_000 * 1000.0 / large);
        // Linear: four times the letters take about four times as long (a quadratic walk, sixteen).
        assertThat(large).isLessThan(small * 8);
        assertThat(count("SELECT count(*) FROM dead_letter WHERE provider = 'fake-anthropic' AND settlement IS NULL"))
                .isEqualTo(1_000);
    }

    // ------------------------------------------------------------------ jobs and attempts

    @Test
    void bulkCancelByOwnerCancelsWhatTheDryRunCountedEachAuditedWithItsChange() {
        String first = aliceJob("k-1");
        String second = aliceJob("k-2");
        String gone = aliceJob("k-3");
        String bobs =
                createJob(bob, "k-1", JOB_BODY).then().statusCode(201).extract().path("id");
        as(alice).post("/jobs/" + gone + "/cancel").then().statusCode(200);

        Response dryRun = dryRun("job-cancel", "{\"filter\":{\"owner\":\"alice\"}}");
        dryRun.then()
                .statusCode(200)
                .body("count", equalTo(2))
                .body("sample.id", equalTo(java.util.List.of(first, second)));
        finished(execute(
                        "job-cancel",
                        "{\"filter\":{\"owner\":\"alice\"},\"token\":\"" + dryRun.path("token")
                                + "\",\"reason\":\"alice left\"}"))
                .body("done", equalTo(2));
        assertThat(count("SELECT count(*) FROM job WHERE owner_id = 'alice' AND state = 'cancelled'"))
                .isEqualTo(3);
        assertThat(count("SELECT count(*) FROM job WHERE id = '" + bobs + "' AND state = 'accepted'"))
                .isEqualTo(1);
        assertThat(count("SELECT count(*) FROM audit_record WHERE action = 'job.cancel' AND actor = 'otto'"
                        + " AND reason = 'alice left' AND details LIKE '%bulk action%'"))
                .isEqualTo(2);
    }

    @Test
    void aCancelAndItsAuditRecordCommitTogetherOrNeither() {
        String job = aliceJob("k-1");
        execute("CREATE OR REPLACE FUNCTION test_refuse_audit() RETURNS trigger LANGUAGE plpgsql AS"
                + " $$ BEGIN IF NEW.action = 'job.cancel' THEN RAISE EXCEPTION 'audit refused by the test'; END IF;"
                + " RETURN NEW; END $$");
        execute("CREATE TRIGGER test_refuse_audit BEFORE INSERT ON audit_record"
                + " FOR EACH ROW EXECUTE FUNCTION test_refuse_audit()");
        String id;
        try {
            String token = dryRun("job-cancel", "{}").path("token");
            id = execute("job-cancel", "{\"token\":\"" + token + "\"}")
                    .then()
                    .statusCode(202)
                    .body("processed", equalTo(0))
                    .extract()
                    .path("id");
            assertThat(count("SELECT count(*) FROM job WHERE id = '" + job + "' AND state = 'cancelled'"))
                    .isZero();
        } finally {
            execute("DROP TRIGGER test_refuse_audit ON audit_record");
        }
        await().atMost(Duration.ofSeconds(15))
                .until(() -> "done".equals(as(otto).get("/admin/bulk/" + id).path("state")));
        assertThat(count("SELECT count(*) FROM job WHERE id = '" + job + "' AND state = 'cancelled'"))
                .isEqualTo(1);
        assertThat(count("SELECT count(*) FROM audit_record WHERE action = 'job.cancel' AND job_id = '" + job + "'"))
                .isEqualTo(1);
    }

    @Test
    void bulkRetryStartsAnAttemptOnJobsWhoseAttemptsAllFailedAndTheKillSwitchRefusesEach() {
        String failed = aliceJob("k-1");
        String running = aliceJob("k-2");
        execute("UPDATE attempt SET state = 'failed', reason = 'provider said 500' WHERE job_id = '" + failed + "'");
        execute("UPDATE job SET state = 'needs_review', review_reason = 'attempt failed' WHERE id IN ('" + failed
                + "', '" + running + "')");
        execute("UPDATE fallback_switch SET enabled = false, reason = 'provider outage', set_by = 'otto'");

        Response dryRun = dryRun("job-retry", "{\"filter\":{\"reason\":\"FAILED\"}}");
        dryRun.then().statusCode(200).body("count", equalTo(1)).body("sample[0].id", equalTo(failed));
        finished(execute(
                        "job-retry", "{\"filter\":{\"reason\":\"FAILED\"},\"token\":\"" + dryRun.path("token") + "\"}"))
                .body("refused", equalTo(1))
                .body("refusals[0].target", equalTo(failed))
                .body("refusals[0].detail", containsString("provider outage"));
        assertThat(count("SELECT count(*) FROM attempt WHERE job_id = '" + failed + "'"))
                .isEqualTo(1);

        execute("UPDATE fallback_switch SET enabled = true");
        Response again = dryRun("job-retry", "{}");
        finished(execute("job-retry", "{\"token\":\"" + again.path("token") + "\",\"reason\":\"provider back\"}"))
                .body("done", equalTo(1));
        assertThat(count("SELECT count(*) FROM attempt WHERE job_id = '" + failed + "' AND state = 'starting'"))
                .isEqualTo(1);
        assertThat(count("SELECT count(*) FROM attempt WHERE job_id = '" + running + "'"))
                .isEqualTo(1);
        assertThat(count("SELECT count(*) FROM audit_record WHERE action = 'attempt.request' AND job_id = '" + failed
                        + "' AND reason = 'provider back'"))
                .isEqualTo(1);
    }

    @Test
    void bulkQuarantineFailNeedsAReasonAndFailsEveryHeldAttemptOfTheProvider() {
        String held = aliceJob("k-1");
        String other = aliceJob("k-2");
        execute("UPDATE attempt SET state = 'quarantined', reason = 'provider reported no usage' WHERE job_id IN ('"
                + held + "', '" + other + "')");
        execute("UPDATE attempt SET provider = 'fake-b' WHERE job_id = '" + other + "'");
        Response dryRun = dryRun("quarantine-fail", "{\"filter\":{\"provider\":\"fake-a\"}}");
        dryRun.then().statusCode(200).body("count", equalTo(1)).body("sample[0].jobId", equalTo(held));
        String body = "{\"filter\":{\"provider\":\"fake-a\"},\"token\":\"" + dryRun.path("token") + "\"";
        execute("quarantine-fail", body + "}").then().statusCode(400).body("detail", containsString("reason"));
        finished(execute("quarantine-fail", body + ",\"reason\":\"usage never came\"}"))
                .body("done", equalTo(1));
        assertThat(count("SELECT count(*) FROM attempt WHERE job_id = '" + held + "' AND state = 'failed'"))
                .isEqualTo(1);
        assertThat(count("SELECT count(*) FROM job WHERE id = '" + held + "' AND state = 'needs_review'"))
                .isEqualTo(1);
        assertThat(count("SELECT count(*) FROM attempt WHERE job_id = '" + other + "' AND state = 'quarantined'"))
                .isEqualTo(1);
        assertThat(count("SELECT count(*) FROM audit_record WHERE action = 'attempt.resolve.fail'"
                        + " AND reason = 'usage never came' AND details LIKE 'bulk action %'"))
                .isEqualTo(1);
    }

    // ------------------------------------------------------------------ helpers

    /** Dry run and execution of a replay by provider; the milliseconds from execution to done. */
    private long timedReplay(String provider, int letters) {
        String filter = "{\"provider\":\"" + provider + "\"}";
        Response dryRun = dryRun("dlq-replay", "{\"filter\":" + filter + "}");
        dryRun.then().statusCode(200).body("count", equalTo(letters));
        long started = System.nanoTime();
        String id = execute("dlq-replay", "{\"filter\":" + filter + ",\"token\":\"" + dryRun.path("token") + "\"}")
                .then()
                .statusCode(202)
                .extract()
                .path("id");
        // The runner works on it too; the test's thread helps so the time is the work, not the loop's interval.
        bulk.runToEnd(Long.parseLong(id));
        await().atMost(Duration.ofSeconds(60))
                .until(() -> "done".equals(as(otto).get("/admin/bulk/" + id).path("state")));
        long millis = (System.nanoTime() - started) / 1_000_000;
        as(otto).get("/admin/bulk/" + id).then().body("done", equalTo(letters));
        return Math.max(millis, 1);
    }

    /** The progress of the execution's bulk action, which runs in the background, once it is done. */
    private ValidatableResponse finished(Response executed) {
        String id = executed.then().statusCode(202).extract().path("id");
        await().atMost(Duration.ofSeconds(30))
                .until(() -> "done".equals(as(otto).get("/admin/bulk/" + id).path("state")));
        return as(otto).get("/admin/bulk/" + id).then().statusCode(200);
    }

    private Response dryRun(String action, String body) {
        return as(otto).contentType(ContentType.JSON).body(body).post("/admin/bulk/" + action + "/dry-run");
    }

    private Response execute(String action, String body) {
        return as(otto).contentType(ContentType.JSON).body(body).post("/admin/bulk/" + action + "/run");
    }

    private String aliceJob(String key) {
        return createJob(alice, key, JOB_BODY).then().statusCode(201).extract().path("id");
    }

    private UUID aliceAttempt(String key) {
        return UUID.fromString(as(alice).get("/jobs/" + aliceJob(key)).path("attempts[0].id"));
    }

    private void storedDeadLetters(UUID attempt, int letters, String provider) {
        execute("INSERT INTO dead_letter (message_key, attempt_id, job_id, owner_id, provider, reason, death_count,"
                + " dead_lettered_at, source_queue, body) SELECT 'bulk-' || gen_random_uuid(), a.id, a.job_id,"
                + " j.owner_id, '" + provider + "', 'rejected', 1, now(), 'jobs.attempts.dead-letters',"
                + " convert_to('{}', 'UTF8') FROM attempt a JOIN job j ON j.id = a.job_id, generate_series(1, "
                + letters + ") n WHERE a.id = '" + attempt + "'");
    }
}
