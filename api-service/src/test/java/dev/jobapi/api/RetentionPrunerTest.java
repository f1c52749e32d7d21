package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.jobapi.api.service.RetentionPruner;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

/**
 * Retention deletes old losing outputs, old apply keys of closed jobs and old sent outbox rows of
 * ended attempts, and nothing of the ledger.
 */
@QuarkusTest
class RetentionPrunerTest extends ApiTestSupport {

    @Inject
    RetentionPruner pruner;

    private String attemptOf(String jobId) {
        return as(Tokens.user("alice")).get("/jobs/" + jobId).path("attempts[0].id");
    }

    private void generation(String attemptId, String age) {
        execute("INSERT INTO generation (attempt_id, patch, output_digest, created_at) VALUES ('" + attemptId
                + "', convert_to('x', 'UTF8'), 'sha256:x', now() - interval '" + age + "')");
        execute("INSERT INTO usage_record (attempt_id, owner_id, provider, prompt_tokens, completion_tokens, source,"
                + " recorded_at) VALUES ('" + attemptId + "', 'alice', 'fake-a', 1, 2, 'provider_reported', now())");
    }

    @Test
    void prunesOldLosingOutputsAndOldApplyKeysButKeepsTheLedger() {
        String oldLoserJob = createJob(Tokens.user("alice"), "k-1", JOB_BODY)
                .then()
                .extract()
                .path("id");
        String oldLoser = attemptOf(oldLoserJob);
        generation(oldLoser, "8 days");
        execute("UPDATE attempt SET state = 'superseded', output_digest = 'sha256:x' WHERE id = '" + oldLoser + "'");

        String freshLoserJob = createJob(Tokens.user("alice"), "k-2", JOB_BODY)
                .then()
                .extract()
                .path("id");
        String freshLoser = attemptOf(freshLoserJob);
        generation(freshLoser, "1 day");
        execute("UPDATE attempt SET state = 'superseded', output_digest = 'sha256:x' WHERE id = '" + freshLoser + "'");

        String oldWinnerJob = createJob(Tokens.user("alice"), "k-3", JOB_BODY)
                .then()
                .extract()
                .path("id");
        String oldWinner = attemptOf(oldWinnerJob);
        generation(oldWinner, "60 days");
        execute("UPDATE attempt SET state = 'succeeded', output_digest = 'sha256:x' WHERE id = '" + oldWinner + "'");
        execute("UPDATE job SET state = 'completed', winning_attempt_id = '" + oldWinner + "' WHERE id = '"
                + oldWinnerJob + "'");
        execute("INSERT INTO applied_patch (idem_key, job_id, attempt_id, scope, status, created_at, applied_at)"
                + " VALUES ('old-key', '" + oldWinnerJob + "', '" + oldWinner + "', 'store', 'applied',"
                + " now() - interval '60 days', now() - interval '60 days')");

        RetentionPruner.Pruned pruned = pruner.prune();

        assertThat(pruned.losingOutputs()).isEqualTo(1);
        assertThat(pruned.appliedKeys()).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM generation WHERE attempt_id = '" + oldLoser + "'"))
                .isZero();
        assertThat(count("SELECT count(*) FROM generation WHERE attempt_id = '" + freshLoser + "'"))
                .isEqualTo(1);
        // The winner's output stays: clients fetch it from GET /jobs/{id}/output.
        assertThat(count("SELECT count(*) FROM generation WHERE attempt_id = '" + oldWinner + "'"))
                .isEqualTo(1);
        assertThat(count("SELECT count(*) FROM usage_record")).isEqualTo(3);
        assertThat(count("SELECT count(*) FROM job")).isEqualTo(3);
        assertThat(count("SELECT count(*) FROM attempt")).isEqualTo(3);
    }

    /** The job's first attempt, put in {@code state}, its outbox row sent {@code sentAgo} (null: unsent). */
    private String attemptWithOutboxRow(String key, String state, String sentAgo) {
        String attempt = attemptOf(
                createJob(Tokens.user("alice"), key, JOB_BODY).then().extract().path("id"));
        execute("UPDATE attempt SET state = '" + state + "' WHERE id = '" + attempt + "'");
        execute("UPDATE outbox SET created_at = now() - interval '8 days', sent_at = "
                + (sentAgo == null ? "NULL" : "now() - interval '" + sentAgo + "'") + " WHERE attempt_id = '"
                + attempt + "'");
        return attempt;
    }

    private long outboxRowsOf(String attempt) {
        return count("SELECT count(*) FROM outbox WHERE attempt_id = '" + attempt + "'");
    }

    @Test
    void prunesOutboxRowsSentAWeekAgoOfEndedAttemptsOnly() {
        String endedSentLongAgo = attemptWithOutboxRow("o-1", "failed", "8 days");
        String endedSentYesterday = attemptWithOutboxRow("o-2", "failed", "1 day");
        String openSentLongAgo = attemptWithOutboxRow("o-3", "starting", "8 days");
        String endedNeverSent = attemptWithOutboxRow("o-4", "superseded", null);

        RetentionPruner.Pruned pruned = pruner.prune();

        assertThat(pruned.sentOutboxRows()).isEqualTo(1);
        assertThat(outboxRowsOf(endedSentLongAgo)).isZero();
        assertThat(outboxRowsOf(endedSentYesterday)).isEqualTo(1);
        // Announcing a held attempt again copies the trace its first row kept.
        assertThat(outboxRowsOf(openSentLongAgo)).isEqualTo(1);
        assertThat(outboxRowsOf(endedNeverSent)).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM attempt")).isEqualTo(4);
    }
}
