package dev.jobapi.worker.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.jobapi.common.apply.ApplyKey;
import dev.jobapi.worker.FakeProviderResource;
import dev.jobapi.worker.WorkerTestSupport;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Rule 7 with the applier that applies in the database ({@code jobapi.apply.mode=store}, the bench's
 * mode): the winner's key is reserved and recorded applied by one statement in the step that
 * completes the job, and a key reserved before is never applied twice.
 */
@QuarkusTest
@TestProfile(StoreApplyTest.StoreMode.class)
@QuarkusTestResource(value = FakeProviderResource.class, restrictToAnnotatedClass = true)
class StoreApplyTest extends WorkerTestSupport {

    /** The worker with the store applier. */
    public static class StoreMode implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("jobapi.apply.mode", "store");
        }
    }

    private static final String PATCH = "--- a/README.md\n+++ b/README.md\n";

    @Inject
    AttemptSteps steps;

    @Inject
    ElectionStep election;

    @Inject
    ApplyStep apply;

    @Test
    void aJobAppliedInTheDatabaseHasOneKeyRecordedAppliedAndOneApplyOnItsTimeline() {
        UUID job = aJob("applied in the database");
        UUID attempt = aStartingAttempt(job, "fake-a");
        publish(attempt, job);

        await().atMost(Duration.ofSeconds(20)).until(() -> "completed".equals(jobState(job)));
        assertThat(text("SELECT status || ' ' || (target_ref = 'store:' || idem_key) || ' '"
                        + " || (applied_at IS NOT NULL) FROM applied_patch WHERE job_id = '" + job + "'"))
                .as("the key's one row: status, its reference, its time")
                .isEqualTo("applied true true");
        assertThat(events(attempt, "apply.done")).isEqualTo(1);
        assertThat(events(attempt, "apply.reserved")).isZero();
    }

    @Test
    void aWinnerWhoseKeyIsAppliedAlreadyAppliesNothingAgain() {
        UUID job = anElectedWinnersJob("key applied before");
        UUID winner = winnerOf(job);
        ApplyKey key = ApplyKey.of(job, PATCH.getBytes(StandardCharsets.UTF_8), "store");
        execute("INSERT INTO applied_patch (idem_key, job_id, attempt_id, scope, status, target_ref, created_at,"
                + " applied_at) VALUES ('" + key.value() + "', '" + job + "', '" + winner
                + "', 'store', 'applied', 'store:earlier', now(), now())");

        assertThat(steps.run(winner, null, apply::reserve)).isNull();

        assertThat(jobState(job)).isEqualTo("completed");
        assertThat(text("SELECT target_ref FROM applied_patch WHERE job_id = '" + job + "'"))
                .as("the earlier apply's row, untouched")
                .isEqualTo("store:earlier");
        assertThat(events(winner, "apply.key_exists")).isEqualTo(1);
        assertThat(events(winner, "apply.done")).isZero();
    }

    @Test
    void aWinnerWhoseKeyWasLeftPendingIsMarkedApplied() {
        UUID job = anElectedWinnersJob("key left pending");
        UUID winner = winnerOf(job);
        ApplyKey key = ApplyKey.of(job, PATCH.getBytes(StandardCharsets.UTF_8), "store");
        execute("INSERT INTO applied_patch (idem_key, job_id, attempt_id, scope, status, created_at) VALUES ('"
                + key.value() + "', '" + job + "', '" + winner + "', 'store', 'pending', now())");

        assertThat(steps.run(winner, null, apply::reserve)).isNull();

        assertThat(jobState(job)).isEqualTo("completed");
        assertThat(text("SELECT status || ' ' || target_ref FROM applied_patch WHERE job_id = '" + job + "'"))
                .isEqualTo("applied store:" + key.value());
        assertThat(events(winner, "apply.key_exists")).isEqualTo(1);
        assertThat(events(winner, "apply.done")).isEqualTo(1);
    }

    /** A job whose attempt stored {@link #PATCH} with reported usage and won the election. */
    private UUID anElectedWinnersJob(String prompt) {
        UUID job = aJob(prompt);
        UUID winner = aStartingAttempt(job, "fake-a");
        storeGeneration(winner, "sha256:" + prompt.replace(' ', '-'), PATCH);
        execute("UPDATE attempt SET output_digest = 'sha256:" + prompt.replace(' ', '-') + "' WHERE id = '" + winner
                + "'");
        storeReportedUsage(winner);
        assertThat(steps.run(winner, false, election::elect)).isTrue();
        return job;
    }

    private UUID winnerOf(UUID job) {
        return UUID.fromString(text("SELECT winning_attempt_id FROM job WHERE id = '" + job + "'"));
    }
}
