package dev.jobapi.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.jobapi.common.message.AttemptTopology;
import dev.jobapi.fakeprovider.Script;
import dev.jobapi.fakeprovider.Step;
import dev.jobapi.worker.consumer.AttemptConsumer;
import dev.jobapi.worker.provider.ProviderOutcome;
import dev.jobapi.worker.provider.ProviderRegistry;
import dev.jobapi.worker.provider.ProviderRequest;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The liveness half of the promise: whatever is lost (a message, a lease, an election, an apply),
 * every job ends completed, cancelled or waiting for a person with the reason stated, and nothing
 * is dead-lettered that is not poison. Real database, broker, fake provider and git repository.
 */
@QuarkusTest
@QuarkusTestResource(value = FakeProviderResource.class, restrictToAnnotatedClass = true)
class NothingStrandedTest extends WorkerTestSupport {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @Inject
    ProviderRegistry providers;

    @Inject
    AttemptConsumer consumer;

    @Test
    void claimedAttemptWhoseLeaseRanOutWithNoMessageLeftIsFoundByTheSweepAndReconciled() throws Exception {
        // CI's soak: the worker that claimed it died after the provider answered, and the message was
        // dead-lettered by broker restarts; nothing will ever be delivered for it again.
        UUID job = aJob("lease ran out, no message");
        UUID attempt = aStartingAttempt(job, "fake-a");
        ProviderOutcome answered = providers
                .forName("fake-a")
                .generate(new ProviderRequest(
                        attempt,
                        "attempt-" + attempt,
                        "fake-a",
                        "lease ran out, no message",
                        Instant.now().plusSeconds(30),
                        () -> true));
        assertThat(answered).isInstanceOf(ProviderOutcome.Completed.class);
        execute("UPDATE attempt SET lease_owner = 'dead-worker', lease_expires_at = now() - interval '1 second',"
                + " sent_at = now() - interval '1 minute' WHERE id = '" + attempt + "'");
        execute("UPDATE job SET state = 'running' WHERE id = '" + job + "'");

        await().atMost(PATIENCE).until(() -> "completed".equals(jobState(job)));
        assertThat(attemptState(attempt)).isEqualTo("succeeded");
        assertThat(commitsOnJobBranch(job)).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM usage_record WHERE attempt_id = '" + attempt
                        + "' AND source = 'provider_reported' AND prompt_tokens IS NOT NULL"))
                .isEqualTo(1);
        assertThat(requestsMatching("lease ran out, no message")).hasSize(1); // never resent
    }

    @Test
    void storedResultOfAnUnknownAttemptWhoseElectionFailedIsElectedAndAppliedOnce() throws Exception {
        // What the reconciler leaves when the election fails once after it stored a found result.
        UUID job = aJob("election failed once");
        UUID attempt = aStartingAttempt(job, "fake-a");
        storeResult(attempt);
        execute("UPDATE attempt SET state = 'unknown', reason = 'sent, then no answer', sent_at = now()"
                + " - interval '1 minute', updated_at = now() - interval '1 minute' WHERE id = '" + attempt + "'");
        execute("UPDATE job SET state = 'needs_review', review_reason = 'unknown' WHERE id = '" + job + "'");

        await().atMost(PATIENCE).until(() -> "completed".equals(jobState(job)));
        assertThat(attemptState(attempt)).isEqualTo("succeeded");
        assertThat(commitsOnJobBranch(job)).isEqualTo(1);
    }

    @Test
    void answerStoredAloneWhenItsRecordStepCouldNotCommitIsElectedAndAppliedOnce() throws Exception {
        // What the record step leaves when it cannot commit (the database went away mid-step): the
        // paid answer committed on its own, generation and usage, and the attempt still starting,
        // its output digest not yet recorded. Its message is gone; the sweep elects it.
        UUID job = aJob("record step could not commit");
        UUID attempt = aStartingAttempt(job, "fake-a");
        execute("UPDATE attempt SET lease_owner = 'worker-gone', lease_expires_at = now() + interval '1 minute',"
                + " sent_at = now() - interval '1 minute', updated_at = now() - interval '1 minute'"
                + " WHERE id = '" + attempt + "'");
        execute("UPDATE job SET state = 'running' WHERE id = '" + job + "'");
        storeResult(attempt);

        await().atMost(PATIENCE).until(() -> "completed".equals(jobState(job)));
        assertThat(attemptState(attempt)).isEqualTo("succeeded");
        assertThat(text("SELECT output_digest FROM attempt WHERE id = '" + attempt + "'"))
                .isEqualTo("sha256:stored");
        assertThat(commitsOnJobBranch(job)).isEqualTo(1);
    }

    @Test
    void answerStoredWithoutTheProvidersUsageIsHeldForAnOperatorNeverElected() throws Exception {
        // The 30-minute soak: the record step could commit nothing but the answer, whose provider had
        // reported no usage; the redelivery took the stored answer to the election and applied it.
        UUID job = aJob("stored without usage");
        UUID attempt = aStartingAttempt(job, "fake-a");
        storeGeneration(attempt, "sha256:no-usage");
        execute("INSERT INTO usage_record (attempt_id, owner_id, provider, source, recorded_at) VALUES ('" + attempt
                + "', 'alice', 'fake-a', 'unknown', now())");
        execute("UPDATE attempt SET lease_owner = 'worker-that-lost-its-step', lease_expires_at = now() + interval"
                + " '1 minute', sent_at = now() - interval '10 seconds' WHERE id = '" + attempt + "'");
        execute("UPDATE job SET state = 'running' WHERE id = '" + job + "'");
        publish(attempt, job);

        await().atMost(PATIENCE).until(() -> "quarantined".equals(attemptState(attempt)));
        assertThat(jobState(job)).isEqualTo("needs_review");
        assertThat(text("SELECT winning_attempt_id FROM job WHERE id = '" + job + "'"))
                .isNull();
        assertThat(count("SELECT count(*) FROM applied_patch WHERE job_id = '" + job + "'"))
                .isZero();
        assertThat(commitsOnJobBranch(job)).isZero();
    }

    @Test
    void resultArrivingAfterTheLeaseWasDeclaredLostIsElectedNotStranded() throws Exception {
        fake().addScript(Script.of("outlived its lease", Step.delayed(1_800)));
        UUID job = aJob("outlived its lease");
        UUID attempt = aStartingAttempt(job, "fake-a");
        publish(attempt, job);
        await().atMost(PATIENCE)
                .until(() -> text("SELECT lease_owner FROM attempt WHERE id = '" + attempt + "'") != null);
        // The call outlives its lease: the sweep declares the attempt unknown while it is in flight.
        execute("UPDATE attempt SET lease_expires_at = now() - interval '1 second' WHERE id = '" + attempt + "'");
        await().atMost(PATIENCE).until(() -> !"starting".equals(attemptState(attempt)));

        await().atMost(PATIENCE).until(() -> "completed".equals(jobState(job)));
        assertThat(attemptState(attempt)).isEqualTo("succeeded");
        assertThat(commitsOnJobBranch(job)).isEqualTo(1);
        assertThat(requestsMatching("outlived its lease")).hasSize(1);
    }

    @Test
    void attemptSupersededWhileItsFirstSendIsOutIsNeverResent() {
        // The first send answers 502 (resendable) slowly; a reviewer supersedes the attempt meanwhile.
        fake().addScript(Script.of("superseded mid-call", new Step(502, 1_500, false, false, null), Step.ok()));
        UUID job = aJob("superseded mid-call");
        UUID attempt = aStartingAttempt(job, "fake-a");
        publish(attempt, job);
        await().atMost(PATIENCE)
                .until(() -> requestsMatching("superseded mid-call").size() == 1);
        execute("UPDATE attempt SET state = 'superseded', reason = 'replaced by rita' WHERE id = '" + attempt + "'");

        // Without the check the resend follows the 502 within the backoff (50 ms in tests).
        await().during(Duration.ofSeconds(3))
                .atMost(Duration.ofSeconds(4))
                .until(() -> requestsMatching("superseded mid-call").size() == 1);
        assertThat(attemptState(attempt)).isEqualTo("superseded");
    }

    @Test
    void lostAnswerThatWasCutOffAtTheOutputLimitIsReconciledAsFailedWithItsUsage() {
        // The answer comes after the read timeout (unknown) and was truncated: paid for, never applied.
        fake().addScript(Script.of("cut off and lost", new Step(200, 3_000, false, false, null, null, 0, true, null)));
        UUID job = aJob("cut off and lost");
        UUID attempt = aStartingAttempt(job, "fake-a");
        publish(attempt, job);

        await().atMost(PATIENCE).until(() -> "failed".equals(attemptState(attempt)));
        assertThat(text("SELECT reason FROM attempt WHERE id = '" + attempt + "'"))
                .contains("output limit");
        assertThat(count("SELECT count(*) FROM usage_record WHERE attempt_id = '" + attempt
                        + "' AND source = 'provider_reported' AND completion_tokens > 0"))
                .isEqualTo(1);
        assertThat(jobState(job)).isEqualTo("needs_review");
        assertThat(count("SELECT count(*) FROM applied_patch WHERE job_id = '" + job + "'"))
                .isZero();
    }

    @Test
    void startingAttemptNobodyClaimedIsAnnouncedAgainThroughTheOutbox() {
        // Its message was lost (a queue deleted, a park dead-lettered): no worker will ever see it.
        UUID job = aJob("never claimed");
        UUID attempt = aStartingAttempt(job, "fake-a");
        execute("UPDATE attempt SET created_at = now() - interval '1 minute' WHERE id = '" + attempt + "'");

        await().atMost(PATIENCE)
                .until(() ->
                        count("SELECT count(*) FROM outbox WHERE attempt_id = '" + attempt + "' AND sent_at IS NULL")
                                == 1);
        // One announcement per bound, not one per round.
        await().during(Duration.ofSeconds(2))
                .atMost(Duration.ofSeconds(3))
                .until(() -> count("SELECT count(*) FROM outbox WHERE attempt_id = '" + attempt + "'") == 1);
    }

    @Test
    void patchTheTargetRefusesForGoodSendsTheJobToReviewWithTheReasonAndFreesTheWin() throws Exception {
        UUID job = aJob("no such base");
        execute("UPDATE job SET input = replace(input, '\"main\"', '\"no-such-branch\"') WHERE id = '" + job + "'");
        UUID attempt = aStartingAttempt(job, "fake-a");
        publish(attempt, job);

        await().atMost(PATIENCE).until(() -> "needs_review".equals(jobState(job)));
        assertThat(text("SELECT review_reason FROM job WHERE id = '" + job + "'"))
                .contains("apply refused")
                .contains("no-such-branch");
        assertThat(attemptState(attempt)).isEqualTo("failed");
        assertThat(text("SELECT winning_attempt_id FROM job WHERE id = '" + job + "'"))
                .isNull();
        assertThat(count("SELECT count(*) FROM applied_patch WHERE job_id = '" + job + "'"))
                .isZero();
        assertThat(deadLetters()).isEmpty();
        // Another attempt may now win and apply (the owner asked again, with a base that exists).
        execute("UPDATE job SET input = replace(input, '\"no-such-branch\"', '\"main\"') WHERE id = '" + job + "'");
        UUID second = aStartingAttempt(job, "fake-b");
        publish(second, job);
        await().atMost(PATIENCE).until(() -> "completed".equals(jobState(job)));
        assertThat(commitsOnJobBranch(job)).isEqualTo(1);
    }

    @Test
    void jobWhoseLastOpenAttemptFailsForGoodWaitsForItsOwnerInReviewNotRunning() throws Exception {
        // A 400 is definitive and the job names no fallback: nothing is left to run it.
        fake().addScript(Script.forModel("fake-a", Step.failing(400)));
        UUID job = aJob("refused for good");
        UUID attempt = aStartingAttempt(job, "fake-a");
        publish(attempt, job);

        await().atMost(PATIENCE).until(() -> "failed".equals(attemptState(attempt)));
        await().atMost(PATIENCE).until(() -> "needs_review".equals(jobState(job)));
        assertThat(text("SELECT review_reason FROM job WHERE id = '" + job + "'"))
                .contains("attempt " + attempt + " (fake-a) failed")
                .contains("400")
                .endsWith("no attempt is left open: ask for another attempt or cancel");
        // The owner asks again: the job runs and completes like any other.
        UUID second = aStartingAttempt(job, "fake-b");
        execute("UPDATE job SET state = 'running' WHERE id = '" + job + "'");
        publish(second, job);
        await().atMost(PATIENCE).until(() -> "completed".equals(jobState(job)));
        assertThat(commitsOnJobBranch(job)).isEqualTo(1);
    }

    @Test
    void baseRefNamingNoCommitIsRefusedForGoodNotRetriedForEver() {
        // Forty hex digits pass as git names and resolve without a lookup, to an object that is not there.
        UUID job = aJob("base names no commit");
        execute("UPDATE job SET input = replace(input, '\"main\"', '\"" + "0".repeat(40) + "\"') WHERE id = '" + job
                + "'");
        UUID attempt = aStartingAttempt(job, "fake-a");
        publish(attempt, job);

        await().atMost(PATIENCE).until(() -> "needs_review".equals(jobState(job)));
        assertThat(text("SELECT review_reason FROM job WHERE id = '" + job + "'"))
                .contains("apply refused by the target: base ref '" + "0".repeat(40) + "' names no commit");
        assertThat(attemptState(attempt)).isEqualTo("failed");
        assertThat(count("SELECT count(*) FROM job_event WHERE job_id = '" + job + "' AND kind = 'apply.deferred'"))
                .isZero();
    }

    @Test
    void failingDeliveriesAreCountedDeadLetteredAtTheLimitAndTheAttemptSettledWithTheReason() {
        UUID job = aJob("always throws");
        UUID attempt = aStartingAttempt(job, "fake-a");
        // Every delivery of this attempt fails inside the pipeline's first transaction (its first write
        // is the delivery's timeline event: the claim's, when the delivery claims).
        execute("CREATE OR REPLACE FUNCTION poison_job_event() RETURNS trigger LANGUAGE plpgsql AS"
                + " $$ BEGIN RAISE EXCEPTION 'poisoned for the test'; END $$");
        execute("CREATE TRIGGER poison_job_event BEFORE INSERT ON job_event FOR EACH ROW WHEN (NEW.job_id = '" + job
                + "' AND (NEW.kind LIKE 'message.%' OR NEW.kind = 'attempt.claimed')) EXECUTE FUNCTION"
                + " poison_job_event()");
        try {
            publish(attempt, job);
            await().atMost(Duration.ofSeconds(60)).until(() -> !deadLetters().isEmpty());
            assertThat(count("SELECT failed_deliveries FROM attempt WHERE id = '" + attempt + "'"))
                    .isEqualTo(5);
            // No delivery will move it again: it never went out, so it failed, and the job waits for its owner.
            await().atMost(PATIENCE).until(() -> "failed".equals(attemptState(attempt)));
            assertThat(text("SELECT reason FROM attempt WHERE id = '" + attempt + "'"))
                    .startsWith("not sent: its message failed 5 deliveries and was dead-lettered")
                    .contains("poisoned for the test");
            assertThat(jobState(job)).isEqualTo("needs_review");
            assertThat(text("SELECT review_reason FROM job WHERE id = '" + job + "'"))
                    .endsWith("ask for another attempt or cancel");
            assertThat(requestsMatching("always throws")).isEmpty();
        } finally {
            execute("DROP TRIGGER IF EXISTS poison_job_event ON job_event");
        }
    }

    @Test
    void workQueueDeletedUnderTheConsumerIsDeclaredAgainAndConsumedFrom() {
        broker.withChannel(channel -> channel.queueDelete(AttemptTopology.QUEUE));
        // The broker cancels the consumer; the subscription loop declares the topology and subscribes again.
        await().atMost(PATIENCE)
                .until(() -> consumer.subscribed()
                        && broker.withChannel(channel -> channel.queueDeclarePassive(AttemptTopology.QUEUE)) != null);
        UUID job = aJob("after the queue came back");
        publish(aStartingAttempt(job, "fake-a"), job);
        await().atMost(PATIENCE).until(() -> "completed".equals(jobState(job)));
    }

    @Test
    void delayQueueAndDeadLetterExchangeDeletedAreDeclaredAgainWhenTheyAreNeeded() {
        // Deleted under a running worker that stays subscribed: nothing else would declare them again.
        broker.withChannel(channel -> {
            channel.queueDelete(AttemptTopology.DELAY_QUEUE);
            channel.exchangeDelete(AttemptTopology.DEAD_LETTER_EXCHANGE);
            return null;
        });
        try {
            // Another worker holds a live lease: the message is parked in the delay queue, not failed.
            UUID job = aJob("parked with no delay queue");
            UUID attempt = aStartingAttempt(job, "fake-a");
            execute("UPDATE attempt SET lease_owner = 'other-worker', lease_expires_at = now() + interval '1 minute',"
                    + " sent_at = now() WHERE id = '" + attempt + "'");
            publish(attempt, job);
            await().atMost(PATIENCE)
                    .ignoreExceptions() // the delay queue is missing until the worker declares it again
                    .until(() -> count("SELECT count(*) FROM job_event WHERE job_id = '" + job
                                            + "' AND kind = 'message.parked'")
                                    > 0
                            && broker.withChannel(channel -> channel.queueDeclarePassive(AttemptTopology.DELAY_QUEUE)
                                            .getMessageCount())
                                    == 1);
            assertThat(count("SELECT failed_deliveries FROM attempt WHERE id = '" + attempt + "'"))
                    .isZero();
            // A message that is not an attempt message reaches the dead-letter queue, not nowhere.
            publishRaw("not an attempt message {");
            await().atMost(PATIENCE).until(() -> deadLetters().contains("not an attempt message {"));
        } finally {
            broker.declareTopology();
        }
    }

    @Test
    void shutdownCancelsTheConsumerHandsBackWhatItHoldsAndDeadLettersNothing() throws Exception {
        fake().addScript(Script.of("rolling deploy", Step.delayed(1_500)));
        List<UUID> jobs = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            UUID job = aJob("rolling deploy " + i);
            jobs.add(job);
            publish(aStartingAttempt(job, "fake-a"), job);
        }
        await().atMost(PATIENCE).until(() -> count("SELECT count(*) FROM attempt WHERE lease_owner IS NOT NULL") > 0);
        try {
            consumer.stopConsuming(); // what SIGTERM runs first
            assertThat(consumer.subscribed()).isFalse();
            assertThat(deadLetters()).isEmpty();
        } finally {
            consumer.resume(); // the next process
        }
        for (UUID job : jobs) {
            await().atMost(PATIENCE).until(() -> "completed".equals(jobState(job)));
        }
        for (int i = 0; i < 12; i++) {
            assertThat(requestsMatching("rolling deploy " + i + "\"")).hasSize(1);
        }
        assertThat(count("SELECT coalesce(max(failed_deliveries), 0) FROM attempt"))
                .isZero();
        assertThat(deadLetters()).isEmpty();
    }

    @Test
    void messageInFlightWhenTheWorkerStopsIsDeliveredAgainBecauseNothingIsAckedBeforeItsCommit() throws Exception {
        // Rule 8. The provider answers after the shutdown grace (1 s in tests), so the stopping worker
        // abandons the message mid-step, as a process killed there would. Unacked, the broker gives
        // it to the next consumer: the timeline shows the redelivery. Acked on receipt, it would not.
        fake().addScript(Script.of("abandoned mid-step", Step.delayed(1_500)));
        UUID job = aJob("abandoned mid-step");
        UUID attempt = aStartingAttempt(job, "fake-a");
        publish(attempt, job);
        await().atMost(PATIENCE).until(() -> count("SELECT count(*) FROM attempt WHERE lease_owner IS NOT NULL") > 0);
        try {
            consumer.stopConsuming();
        } finally {
            consumer.resume();
        }
        await().atMost(PATIENCE)
                .until(() -> "completed".equals(jobState(job))
                        && count("SELECT count(*) FROM job_event WHERE attempt_id = '" + attempt
                                        + "' AND kind = 'message.redelivered'")
                                > 0);
        assertThat(requestsMatching("abandoned mid-step")).hasSize(1);
        assertThat(deadLetters()).isEmpty();
    }

    private void storeResult(UUID attempt) {
        storeGeneration(attempt, "sha256:stored");
        storeReportedUsage(attempt);
    }
}
