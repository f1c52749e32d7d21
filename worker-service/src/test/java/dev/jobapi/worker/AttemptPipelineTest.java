package dev.jobapi.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.jobapi.common.callback.CallbackInbox;
import dev.jobapi.common.callback.ProviderCallback;
import dev.jobapi.common.job.JobRepository;
import dev.jobapi.common.job.JobState;
import dev.jobapi.common.message.AttemptTopology;
import dev.jobapi.common.message.ConfirmedPublisher;
import dev.jobapi.common.testing.TestBroker;
import dev.jobapi.fakeprovider.DemoRepository;
import dev.jobapi.fakeprovider.ReceivedRequest;
import dev.jobapi.fakeprovider.Script;
import dev.jobapi.fakeprovider.Step;
import dev.jobapi.worker.apply.CrashingApplier;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * docs/design.md, rules 4 to 9 and 13, end to end over the real database, broker, provider and git.
 */
@QuarkusTest
@QuarkusTestResource(value = FakeProviderResource.class, restrictToAnnotatedClass = true)
class AttemptPipelineTest extends WorkerTestSupport {

    private static final Duration PATIENCE = Duration.ofSeconds(20);

    @Inject
    CallbackInbox callbacks;

    @Inject
    CrashingApplier applier;

    @Inject
    JobRepository jobs;

    @Inject
    ConfirmedPublisher publisher;

    @Test
    void completesJobAppliesOneCommitAndRecordsProviderUsage() throws Exception {
        UUID job = aJob("happy path");
        UUID attempt = aStartingAttempt(job, "fake-a");
        publish(attempt, job);
        await().atMost(PATIENCE).until(() -> "completed".equals(jobState(job)));
        assertThat(attemptState(attempt)).isEqualTo("succeeded");
        assertThat(text("SELECT winning_attempt_id FROM job WHERE id = '" + job + "'"))
                .isEqualTo(attempt.toString());
        assertThat(count("SELECT count(*) FROM applied_patch WHERE job_id = '" + job + "' AND status = 'applied'"))
                .isEqualTo(1);
        assertThat(commitsOnJobBranch(job)).isEqualTo(1);
        assertThat(text("SELECT remote_id FROM attempt WHERE id = '" + attempt + "'"))
                .startsWith("chatcmpl-");
        ReceivedRequest request = requestsMatching("happy path").get(0);
        assertThat(request.attemptId()).isEqualTo(attempt.toString());
        assertThat(request.requestKey()).isEqualTo("attempt-" + attempt);
        assertThat(count("SELECT prompt_tokens FROM usage_record WHERE attempt_id = '" + attempt + "'"))
                .isEqualTo(request.usage().promptTokens());
    }

    /**
     * Rule 4 when the step that records an answer cannot commit at all (here a trigger refuses the
     * apply reservation the same step writes; neither a conflict nor the database away, so the step
     * is not run again): the answer paid for is stored alone at once, generation and reported
     * usage, and never asked of the provider again, neither by a resend nor by a lookup.
     */
    @Test
    void aPaidAnswerWhoseRecordStepCannotCommitIsStoredAloneWithoutAskingTheProviderAgain() {
        execute("CREATE OR REPLACE FUNCTION test_refuse_reservation() RETURNS trigger LANGUAGE plpgsql AS"
                + " $$ BEGIN RAISE EXCEPTION 'apply reservation refused by the test'; END $$");
        execute("CREATE TRIGGER test_refuse_reservation BEFORE INSERT ON applied_patch"
                + " FOR EACH ROW EXECUTE FUNCTION test_refuse_reservation()");
        try {
            UUID job = aJob("record step refused");
            UUID attempt = aStartingAttempt(job, "fake-a");
            publish(attempt, job);
            await().atMost(PATIENCE)
                    .until(() -> count("SELECT count(*) FROM generation WHERE attempt_id = '" + attempt + "'") == 1);
            assertThat(count("SELECT count(*) FROM usage_record WHERE attempt_id = '" + attempt
                            + "' AND source = 'provider_reported'"))
                    .isEqualTo(1);
            assertThat(requestsMatching("record step refused")).hasSize(1);
            assertThat(fake().lookups()).noneMatch(lookup -> attempt.toString().equals(lookup.attemptId()));
        } finally {
            execute("DROP TRIGGER test_refuse_reservation ON applied_patch");
        }
    }

    /**
     * Rule 18: no provider call starts at or after a job's deadline. A message delivered past it fails
     * its attempt without a request, and the job, nothing else open, ends cancelled as expired; a job
     * whose deadline is still ahead runs as any other.
     */
    @Test
    void aJobPastItsDeadlineIsNeverSentToTheProviderAndEndsCancelledAsExpired() {
        UUID expired = aJob("deadline passed");
        execute("UPDATE job SET deadline = now() - interval '1 second' WHERE id = '" + expired + "'");
        UUID expiredAttempt = aStartingAttempt(expired, "fake-a");
        UUID ahead = aJob("deadline ahead");
        execute("UPDATE job SET deadline = now() + interval '1 hour' WHERE id = '" + ahead + "'");
        UUID aheadAttempt = aStartingAttempt(ahead, "fake-a");
        publish(expiredAttempt, expired);
        publish(aheadAttempt, ahead);

        await().atMost(PATIENCE).until(() -> "completed".equals(jobState(ahead)));
        await().atMost(PATIENCE).until(() -> "cancelled".equals(jobState(expired)));
        assertThat(text("SELECT cancel_reason FROM job WHERE id = '" + expired + "'"))
                .isEqualTo("expired");
        assertThat(attemptState(expiredAttempt)).isEqualTo("failed");
        assertThat(text("SELECT reason FROM attempt WHERE id = '" + expiredAttempt + "'"))
                .contains("deadline")
                .contains("no request sent");
        assertThat(requestsMatching("deadline passed")).isEmpty();
        assertThat(requestsMatching("deadline ahead")).hasSize(1);
    }

    /**
     * Rule 19: while its provider is paused an attempt is held: delivered again and again, it is not
     * called, not failed, not counted toward the delivery limit and never dead-lettered; once the
     * pause ends, its next delivery (the resume's announcement) completes it.
     */
    @Test
    void aPausedProvidersAttemptIsHeldUncountedAndCompletesAfterTheResume() {
        execute("INSERT INTO provider_pause (provider, paused_by, paused_at, reason)"
                + " VALUES ('fake-a', 'otto', now(), 'outage')");
        UUID held = aJob("held while paused");
        UUID heldAttempt = aStartingAttempt(held, "fake-a");
        for (int delivery = 0; delivery < AttemptTopology.DELIVERY_LIMIT + 2; delivery++) {
            publish(heldAttempt, held);
        }
        await().atMost(PATIENCE)
                .until(() -> count("SELECT count(*) FROM job_event WHERE attempt_id = '" + heldAttempt
                                + "' AND kind IN ('message.delivered', 'message.redelivered')")
                        == AttemptTopology.DELIVERY_LIMIT + 2);
        assertThat(attemptState(heldAttempt)).isEqualTo("starting");
        assertThat(text("SELECT lease_owner FROM attempt WHERE id = '" + heldAttempt + "'"))
                .isNull();
        assertThat(count("SELECT failed_deliveries FROM attempt WHERE id = '" + heldAttempt + "'"))
                .isZero();
        assertThat(requestsMatching("held while paused")).isEmpty();
        assertThat(deadLetters()).isEmpty();

        execute("DELETE FROM provider_pause");
        publish(heldAttempt, held);
        await().atMost(PATIENCE).until(() -> "completed".equals(jobState(held)));
        assertThat(requestsMatching("held while paused")).hasSize(1);
    }

    @Test
    void timeoutAfterTheProviderReceivedTheRequestMakesTheAttemptUnknownNotFailed() {
        fake().addScript(Script.of("slow provider", Step.delayed(4_000)));
        UUID job = aJob("slow provider");
        UUID attempt = aStartingAttempt(job, "fake-a");
        publish(attempt, job);
        await().atMost(PATIENCE).until(() -> !"starting".equals(attemptState(attempt)));
        assertThat(attemptState(attempt)).isEqualTo("unknown");
        assertThat(jobState(job)).isEqualTo("needs_review");
        assertThat(text("SELECT reason FROM attempt WHERE id = '" + attempt + "'"))
                .contains("read timeout");
        // The provider did receive it, exactly once: nothing was resent after the request went out.
        assertThat(requestsMatching("slow provider")).hasSize(1);
        assertThat(count("SELECT count(*) FROM applied_patch")).isZero();
    }

    @Test
    void twoAttemptsCompletingInReverseOrderHaveExactlyOneWinnerAndOneCommit() throws Exception {
        // Attempt A was requested first but its provider is slower; B finishes first and must win.
        fake().addScript(Script.forModel("fake-a", Step.delayed(1_500)));
        UUID job = aJob("reverse order");
        UUID first = aStartingAttempt(job, "fake-a");
        UUID second = aStartingAttempt(job, "fake-b");
        publish(first, job);
        publish(second, job);
        await().atMost(PATIENCE)
                .until(() -> "completed".equals(jobState(job)) && "superseded".equals(attemptState(first)));
        assertThat(attemptState(second)).isEqualTo("succeeded");
        assertThat(text("SELECT winning_attempt_id FROM job WHERE id = '" + job + "'"))
                .isEqualTo(second.toString());
        assertThat(text("SELECT reason FROM attempt WHERE id = '" + first + "'"))
                .contains(second.toString());
        // The loser's output is kept for diagnostics, never applied.
        assertThat(count("SELECT count(*) FROM generation WHERE attempt_id = '" + first + "'"))
                .isEqualTo(1);
        assertThat(count("SELECT count(*) FROM applied_patch WHERE job_id = '" + job + "'"))
                .isEqualTo(1);
        assertThat(commitsOnJobBranch(job)).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM usage_record WHERE source = 'provider_reported'"))
                .isEqualTo(2);
    }

    @Test
    void postmortemReplayAppliesOnceAfterACrashBetweenApplyAndAck() throws Exception {
        fake().addScript(Script.of("postmortem", Step.failing(502), Step.failing(502), Step.ok()));
        applier.crashOnceAfterTheNextApply();
        UUID job = aJob("postmortem");
        UUID attempt = aStartingAttempt(job, "fake-a");
        publish(attempt, job);
        await().atMost(PATIENCE).until(() -> "completed".equals(jobState(job)));
        assertPostmortemInvariants(job, attempt);
    }

    /** Shared with the mutation check, which must see these fail. */
    void assertPostmortemInvariants(UUID job, UUID attempt) throws Exception {
        assertThat(count("SELECT count(*) FROM applied_patch WHERE job_id = '" + job + "'"))
                .isEqualTo(1);
        assertThat(commitsOnJobBranch(job)).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM usage_record WHERE attempt_id = '" + attempt
                        + "' AND source = 'provider_reported' AND completion_tokens > 0"))
                .isEqualTo(1);
        assertThat(count("SELECT count(*) FROM usage_record WHERE source = 'unknown'"))
                .isZero();
        // Three sends of one generation (502, 502, 200); the redelivery asked the provider nothing.
        List<ReceivedRequest> sends = requestsMatching("postmortem");
        assertThat(sends).hasSize(3);
        assertThat(sends).extracting(ReceivedRequest::requestKey).containsOnly("attempt-" + attempt);
    }

    @Test
    void poisonMessageIsDeadLetteredAfterTheDeliveryLimit() {
        publishRaw("this is not an attempt message");
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(deadLetters()).containsExactly("this is not an attempt message"));
    }

    @Test
    void lateResultAfterCancelIsRecordedAndNeverApplied() throws Exception {
        fake().addScript(Script.of("cancelled meanwhile", Step.delayed(1_500)));
        UUID job = aJob("cancelled meanwhile");
        UUID attempt = aStartingAttempt(job, "fake-a");
        publish(attempt, job);
        await().atMost(PATIENCE)
                .until(() -> !requestsMatching("cancelled meanwhile").isEmpty());
        QuarkusTransaction.requiringNew().run(() -> jobs.findById(job).cancel(Instant.now()));
        await().atMost(PATIENCE).until(() -> "superseded".equals(attemptState(attempt)));
        assertThat(jobState(job)).isEqualTo("cancelled");
        assertThat(count("SELECT count(*) FROM generation WHERE attempt_id = '" + attempt + "'"))
                .isEqualTo(1);
        assertThat(count("SELECT count(*) FROM usage_record WHERE attempt_id = '" + attempt + "'"))
                .isEqualTo(1);
        assertThat(count("SELECT count(*) FROM applied_patch")).isZero();
        assertThat(commitsOnJobBranch(job)).isZero();
    }

    @Test
    void missingUsageQuarantinesTheAttemptAndAppliesNothing() throws Exception {
        fake().addScript(Script.of("no usage", Step.withoutUsage()));
        UUID job = aJob("no usage");
        UUID attempt = aStartingAttempt(job, "fake-a");
        publish(attempt, job);
        await().atMost(PATIENCE).until(() -> !"starting".equals(attemptState(attempt)));
        assertThat(attemptState(attempt)).isEqualTo("quarantined");
        assertThat(count("SELECT count(*) FROM usage_record WHERE source = 'unknown'"))
                .isEqualTo(1);
        assertThat(count("SELECT count(*) FROM applied_patch")).isZero();
        assertThat(jobState(job)).isEqualTo("needs_review");
        assertThat(commitsOnJobBranch(job)).isZero();
    }

    @Test
    void streamAbortedAfterTheFirstTokenFailsTheAttemptAndDiscardsThePartialOutput() {
        fake().addScript(Script.of("aborted stream", Step.abortingAfterFirstToken()));
        UUID job = aJob("aborted stream");
        UUID attempt = aStartingAttempt(job, "fake-a");
        publish(attempt, job);
        await().atMost(PATIENCE).until(() -> !"starting".equals(attemptState(attempt)));
        assertThat(attemptState(attempt)).isEqualTo("failed");
        assertThat(count("SELECT count(*) FROM generation")).isZero();
        assertThat(count("SELECT count(*) FROM usage_record WHERE source = 'unknown'"))
                .isEqualTo(1);
        assertThat(requestsMatching("aborted stream")).hasSize(1);
    }

    @Test
    void clientErrorFailsTheAttemptWithTheProvidersReasonWithoutResending() {
        fake().addScript(Script.of("bad request", Step.failing(400)));
        UUID job = aJob("bad request");
        UUID attempt = aStartingAttempt(job, "fake-a");
        publish(attempt, job);
        await().atMost(PATIENCE).until(() -> !"starting".equals(attemptState(attempt)));
        assertThat(attemptState(attempt)).isEqualTo("failed");
        assertThat(text("SELECT reason FROM attempt WHERE id = '" + attempt + "'"))
                .contains("400");
        assertThat(requestsMatching("bad request")).hasSize(1);
    }

    @Test
    void redeliveryOfAStartedAttemptWithAnExpiredLeaseMarksItUnknownInsteadOfResending() {
        UUID job = aJob("expired lease");
        UUID attempt = aStartingAttempt(job, "fake-a");
        execute("UPDATE attempt SET lease_owner = 'dead-worker', lease_expires_at = now() - interval '1 minute',"
                + " sent_at = now() - interval '2 minutes' WHERE id = '" + attempt + "'");
        publish(attempt, job);
        await().atMost(PATIENCE).until(() -> "unknown".equals(attemptState(attempt)));
        assertThat(jobState(job)).isEqualTo("needs_review");
        assertThat(requestsMatching("expired lease")).isEmpty();
    }

    @Test
    void liveLeaseParksTheMessageInTheDelayQueueInsteadOfRequeueingHot() {
        UUID job = aJob("live lease");
        UUID attempt = aStartingAttempt(job, "fake-a");
        execute("UPDATE attempt SET lease_owner = 'busy-worker', lease_expires_at = now() + interval '2 seconds',"
                + " sent_at = now() WHERE id = '" + attempt + "'");
        publish(attempt, job);
        // Parked, it comes back after the delay; once the lease is over it is declared unknown.
        await().atMost(PATIENCE).until(() -> "unknown".equals(attemptState(attempt)));
        assertThat(requestsMatching("live lease")).isEmpty();
        assertThat(deadLetters()).isEmpty();
    }

    @Test
    void deadLetteredMessageReplayedTwiceAppliesOnce() throws Exception {
        UUID job = aJob("replayed twice");
        UUID attempt = aStartingAttempt(job, "fake-a");
        // The same attempt's message died twice; an operator replays everything.
        deadLetter(attempt, job);
        deadLetter(attempt, job);
        await().atMost(PATIENCE).until(() -> TestBroker.depth(broker, AttemptTopology.DEAD_LETTER_QUEUE) == 2);
        assertThat(TestBroker.replayDeadLetters(broker, publisher)).isEqualTo(2);
        await().atMost(PATIENCE)
                .until(() -> "completed".equals(jobState(job))
                        // Each copy's delivery wrote a row: a claim's row stands for its delivery's.
                        && count("SELECT count(*) FROM job_event WHERE (kind LIKE 'message.%' OR kind ="
                                        + " 'attempt.claimed') AND job_id = '" + job + "'")
                                >= 2);
        assertThat(count("SELECT count(*) FROM applied_patch WHERE job_id = '" + job + "'"))
                .isEqualTo(1);
        assertThat(commitsOnJobBranch(job)).isEqualTo(1);
        assertThat(requestsMatching("replayed twice")).hasSize(1);
        assertThat(TestBroker.depth(broker, AttemptTopology.DEAD_LETTER_QUEUE)).isZero();
    }

    @Test
    void timelineRecordsTheClaimTransitionsWinnerApplyAndUsageInOrder() {
        UUID job = aJob("timeline");
        UUID attempt = aStartingAttempt(job, "fake-a");
        publish(attempt, job);
        await().atMost(PATIENCE).until(() -> "completed".equals(jobState(job)));
        List<String> kinds = QuarkusTransaction.requiringNew().call(() -> em.createNativeQuery(
                        "SELECT kind FROM job_event WHERE job_id = ?1 ORDER BY id", String.class)
                .setParameter(1, job)
                .getResultList());
        assertThat(kinds)
                // The first delivery's row is the claim's: it names the worker, all a delivery row would say.
                .containsExactly(
                        "attempt.claimed",
                        "generation.stored",
                        "winner.elected",
                        "apply.reserved",
                        "apply.done",
                        "job.completed");
        assertThat(text("SELECT detail FROM job_event WHERE kind = 'generation.stored' AND job_id = '" + job + "'"))
                .contains("usage provider_reported: ");
    }

    @Test
    void quarantinedAttemptReleasedByAnOperatorGoesOnToWinAndApplyOnce() throws Exception {
        fake().addScript(Script.of("held for usage", Step.withoutUsage()));
        UUID job = aJob("held for usage");
        UUID attempt = aStartingAttempt(job, "fake-a");
        publish(attempt, job);
        await().atMost(PATIENCE).until(() -> "quarantined".equals(attemptState(attempt)));
        // What POST /admin/attempts/{id}/resolve commits: reconciled usage, the hold lifted, a new message.
        execute("UPDATE usage_record SET source = 'provider_reported', prompt_tokens = 7, completion_tokens = 9"
                + " WHERE attempt_id = '" + attempt + "'");
        execute("UPDATE attempt SET state = 'unknown' WHERE id = '" + attempt + "'");
        publish(attempt, job);
        await().atMost(PATIENCE).until(() -> "completed".equals(jobState(job)));
        assertThat(attemptState(attempt)).isEqualTo("succeeded");
        assertThat(commitsOnJobBranch(job)).isEqualTo(1);
        // The stored generation was applied; the provider was asked once.
        assertThat(requestsMatching("held for usage")).hasSize(1);
    }

    @Test
    void quarantinedAttemptIsNeverAppliedWhileHeld() throws Exception {
        fake().addScript(Script.of("still held", Step.withoutUsage()));
        UUID job = aJob("still held");
        UUID attempt = aStartingAttempt(job, "fake-a");
        publish(attempt, job);
        await().atMost(PATIENCE).until(() -> "quarantined".equals(attemptState(attempt)));
        publish(attempt, job); // a duplicate or a replay changes nothing while the hold lasts
        await().atMost(PATIENCE)
                .until(() -> count("SELECT count(*) FROM job_event WHERE (kind LIKE 'message.%' OR kind ="
                                + " 'attempt.claimed') AND job_id = '" + job + "'")
                        == 2);
        assertThat(attemptState(attempt)).isEqualTo("quarantined");
        assertThat(count("SELECT count(*) FROM applied_patch")).isZero();
        assertThat(commitsOnJobBranch(job)).isZero();
    }

    @Test
    void unknownAttemptIsReconciledFromTheProviderAndAppliedOnce() throws Exception {
        fake().addScript(Script.of("answer lost", Step.delayed(3_000)));
        UUID job = aJob("answer lost");
        UUID attempt = aStartingAttempt(job, "fake-a");
        publish(attempt, job);
        await().atMost(PATIENCE).until(() -> "unknown".equals(attemptState(attempt)));
        // The provider finished after our timeout; the reconciler finds its stored completion.
        await().atMost(PATIENCE).until(() -> "completed".equals(jobState(job)));
        assertThat(attemptState(attempt)).isEqualTo("succeeded");
        assertThat(commitsOnJobBranch(job)).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM usage_record WHERE attempt_id = '" + attempt
                        + "' AND source = 'provider_reported'"))
                .isEqualTo(1);
        assertThat(count("SELECT count(*) FROM job_event WHERE kind = 'attempt.reconciled'"))
                .isEqualTo(1);
        assertThat(requestsMatching("answer lost")).hasSize(1);
    }

    @Test
    void unknownAttemptIsReconciledFromASignedCallbackTheApiStored() throws Exception {
        // The provider keeps the request past our timeout and has nothing to look up yet.
        fake().addScript(Script.of("calls back", Step.delayed(30_000)));
        UUID job = aJob("calls back");
        UUID attempt = aStartingAttempt(job, "fake-a");
        publish(attempt, job);
        await().atMost(PATIENCE).until(() -> "unknown".equals(attemptState(attempt)));

        // What POST /callbacks/fake-a does once the signature verified: inbox row, then the outbox message.
        QuarkusTransaction.requiringNew()
                .run(() -> callbacks.store(
                        new ProviderCallback(
                                attempt,
                                "fake-a",
                                "callback-remote-1",
                                DemoRepository.defaultPatch().getBytes(StandardCharsets.UTF_8),
                                7,
                                11,
                                Instant.now()),
                        Instant.now()));
        publish(attempt, job);

        await().atMost(PATIENCE).until(() -> "completed".equals(jobState(job)));
        assertThat(attemptState(attempt)).isEqualTo("succeeded");
        assertThat(text("SELECT remote_id FROM attempt WHERE id = '" + attempt + "'"))
                .isEqualTo("callback-remote-1");
        assertThat(text("SELECT prompt_tokens || '+' || completion_tokens || ' ' || source FROM usage_record"
                        + " WHERE attempt_id = '" + attempt + "'"))
                .isEqualTo("7+11 provider_reported");
        assertThat(commitsOnJobBranch(job)).isEqualTo(1);
        assertThat(requestsMatching("calls back")).hasSize(1);
    }

    @Test
    void staleBranchLockLeftByAKilledWorkerDoesNotBlockTheApply() throws Exception {
        UUID job = aJob("stale lock");
        // What a worker SIGKILLed in the middle of moving the job's branch leaves behind (found by the chaos soak).
        Path lock = FakeProviderResource.repository.resolve(".git/refs/heads/jobapi/" + job + ".lock");
        Files.createDirectories(lock.getParent());
        Files.createFile(lock);
        Files.setLastModifiedTime(lock, FileTime.from(Instant.now().minusSeconds(60)));
        UUID attempt = aStartingAttempt(job, "fake-a");
        publish(attempt, job);

        await().atMost(PATIENCE).until(() -> "completed".equals(jobState(job)));
        assertThat(commitsOnJobBranch(job)).isEqualTo(1);
        assertThat(lock).doesNotExist();
    }

    @Test
    void applyTheTargetCannotTakeNowIsRetriedBySweepNotDeadLetteredAndTheJobSaysWhy() throws Exception {
        // The 30-minute soak: the branch's lock was held (a worker killed while moving it, younger than
        // the stale bound) through five deliveries, and a winner's message went to the dead-letter queue.
        UUID job = aJob("branch locked");
        Path lock = FakeProviderResource.repository.resolve(".git/refs/heads/jobapi/" + job + ".lock");
        Files.createDirectories(lock.getParent());
        Files.createFile(lock);
        UUID attempt = aStartingAttempt(job, "fake-a");
        publish(attempt, job);

        await().atMost(PATIENCE).until(() -> "needs_review".equals(jobState(job)));
        assertThat(text("SELECT review_reason FROM job WHERE id = '" + job + "'"))
                .contains("the apply of attempt " + attempt + " has failed 3 times")
                .contains("LOCK_FAILURE")
                .endsWith("it is retried with backoff until the target takes it");
        assertThat(count("SELECT count(*) FROM job_event WHERE job_id = '" + job + "' AND kind = 'apply.deferred'"))
                .isGreaterThanOrEqualTo(3);
        assertThat(count("SELECT failed_deliveries FROM attempt WHERE id = '" + attempt + "'"))
                .isZero();
        Files.delete(lock);
        await().atMost(PATIENCE).until(() -> "completed".equals(jobState(job)));
        assertThat(commitsOnJobBranch(job)).isEqualTo(1);
        assertThat(deadLetters()).isEmpty();
        assertThat(requestsMatching("branch locked")).hasSize(1);
    }

    @Test
    void anAttemptWhoseAnswerIsStoredIsElectedFromItAndNeverClaimedForASecondCall() throws Exception {
        // The claim step claims a free attempt without reading its generation first: the claim's own
        // condition must refuse an attempt whose paid answer is stored, or the provider is called twice.
        UUID job = aJob("answer stored before any claim");
        UUID attempt = aStartingAttempt(job, "fake-a");
        storeGeneration(attempt, "sha256:stored-first");
        storeReportedUsage(attempt);
        publish(attempt, job);

        await().atMost(PATIENCE).until(() -> "completed".equals(jobState(job)));
        assertThat(attemptState(attempt)).isEqualTo("succeeded");
        assertThat(requestsMatching("answer stored before any claim")).isEmpty();
        assertThat(commitsOnJobBranch(job)).isEqualTo(1);
    }

    @Test
    void anAnswerStoredByAnotherPathDuringTheCallIsTheOneElectedAndApplied() throws Exception {
        // A generation is once per attempt: when another path stored one while the call was out (a
        // reconciliation), the record step's own answer is kept out, and what the attempt's digest
        // names and the apply applies is the stored one, never the answer the step had in hand.
        fake().addScript(Script.of("answer stored during the call", Step.delayed(1_200)));
        UUID job = aJob("answer stored during the call");
        UUID attempt = aStartingAttempt(job, "fake-a");
        publish(attempt, job);
        await().atMost(PATIENCE)
                .until(() -> text("SELECT lease_owner FROM attempt WHERE id = '" + attempt + "'") != null);
        storeGeneration(attempt, "sha256:stored-during-the-call");

        await().atMost(PATIENCE).until(() -> "completed".equals(jobState(job)));
        assertThat(text("SELECT output_digest FROM attempt WHERE id = '" + attempt + "'"))
                .isEqualTo("sha256:stored-during-the-call");
        assertThat(commitsOnJobBranch(job)).isEqualTo(1);
    }

    @Test
    void applyStoppedByACrashAfterTheElectionWithNoMessageLeftIsResumed() throws Exception {
        // The state a worker leaves when it dies between the reconciler's election and the apply: a
        // winner, its output and usage, no applied_patch, and no message (the reconciler has none).
        UUID job = aJob("stalled apply");
        UUID attempt = aStartingAttempt(job, "fake-a");
        storeGeneration(attempt, "sha256:stalled");
        storeReportedUsage(attempt);
        execute("UPDATE attempt SET state = 'succeeded', output_digest = 'sha256:stalled', sent_at = now()"
                + " - interval '1 minute' WHERE id = '" + attempt + "'");
        execute("UPDATE job SET state = 'needs_review', winning_attempt_id = '" + attempt + "', version = 1,"
                + " updated_at = now() - interval '10 seconds' WHERE id = '" + job + "'");

        await().atMost(PATIENCE).until(() -> "completed".equals(jobState(job)));
        assertThat(commitsOnJobBranch(job)).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM applied_patch WHERE job_id = '" + job + "' AND status = 'applied'"))
                .isEqualTo(1);
    }

    @Test
    void theSweepListsAJobExactlyWhileItIsOpenWithAWinner() {
        // The sweep reads job_apply_pending, which a trigger on job keeps for every writer (V34),
        // these raw updates included. They run well within the 3 s before an open job with a winner
        // counts as stalled, so the sweep leaves this one alone.
        UUID job = aJob("listed while open with a winner");
        UUID attempt = aStartingAttempt(job, "fake-a");
        String listed = "SELECT count(*) FROM job_apply_pending WHERE job_id = '" + job + "'";
        String where = " WHERE id = '" + job + "'";

        execute("UPDATE job SET state = 'running'" + where);
        assertThat(count(listed)).as("open, no winner").isZero();
        execute("UPDATE job SET winning_attempt_id = '" + attempt + "'" + where);
        assertThat(count(listed)).as("open with a winner").isEqualTo(1);
        execute("UPDATE job SET state = 'needs_review'" + where);
        assertThat(count(listed)).as("still open with a winner").isEqualTo(1);
        execute("UPDATE job SET winning_attempt_id = NULL" + where);
        assertThat(count(listed)).as("the winner released").isZero();
        execute("UPDATE job SET winning_attempt_id = '" + attempt + "', state = 'completed'" + where);
        assertThat(count(listed))
                .as("completed by the update that names the winner")
                .isZero();
        // The trigger names the open states in SQL; they must be the ones JobState calls open.
        for (JobState state : JobState.values()) {
            execute("UPDATE job SET state = '" + state.wireName() + "'" + where);
            assertThat(count(listed)).as("a job with a winner, " + state).isEqualTo(state.isTerminal() ? 0 : 1);
        }
    }

    @Test
    void attemptsTheProviderNeverKnewDoNotStarveOneItCanAnswer() {
        UUID job = aJob("starvation");
        // More never-findable lost answers than a round looks up, all older than the findable one.
        execute("INSERT INTO attempt (id, job_id, provider, state, request_key, reason, sent_at, created_at,"
                + " updated_at) SELECT gen_random_uuid(), '" + job + "', 'fake-a', 'unknown', 'attempt-lost-' || g,"
                + " 'read timed out', now() - interval '1 hour' - g * interval '1 second', now(), now()"
                + " FROM generate_series(1, 25) g");
        UUID findable = aStartingAttempt(job, "fake-a");
        execute("UPDATE attempt SET state = 'unknown', reason = 'read timed out', sent_at = now() - interval"
                + " '1 minute' WHERE id = '" + findable + "'");
        QuarkusTransaction.requiringNew()
                .run(() -> callbacks.store(
                        new ProviderCallback(
                                findable,
                                "fake-a",
                                "found-at-last",
                                DemoRepository.defaultPatch().getBytes(StandardCharsets.UTF_8),
                                3,
                                4,
                                Instant.now()),
                        Instant.now()));

        await().atMost(PATIENCE)
                .until(() -> count("SELECT count(*) FROM usage_record WHERE attempt_id = '" + findable + "'") == 1);
    }

    @Test
    void lostAnswersAreAskedAboutAgainOnADoublingScheduleSoAFreshOneIsNotQueuedBehindOldOnes() {
        UUID job = aJob("lookup schedule");
        // More old lost answers than a round looks up, asked about 30 s ago, an hour after their send:
        // not due again for another hour.
        execute("INSERT INTO attempt (id, job_id, provider, state, request_key, reason, sent_at, looked_up_at,"
                + " created_at, updated_at) SELECT gen_random_uuid(), '" + job + "', 'fake-a', 'unknown',"
                + " 'attempt-old-' || g, 'read timed out', now() - interval '1 hour', now() - interval '30 seconds',"
                + " now(), now() FROM generate_series(1, 30) g");
        // A fresh one, asked about a second after its send when the provider had nothing yet: due now.
        UUID fresh = aStartingAttempt(job, "fake-a");
        execute("UPDATE attempt SET state = 'unknown', reason = 'read timed out', sent_at = now() - interval"
                + " '20 seconds', looked_up_at = now() - interval '19 seconds' WHERE id = '" + fresh + "'");
        Instant start = Instant.now();
        QuarkusTransaction.requiringNew()
                .run(() -> callbacks.store(
                        new ProviderCallback(
                                fresh,
                                "fake-a",
                                "found-on-the-second-ask",
                                DemoRepository.defaultPatch().getBytes(StandardCharsets.UTF_8),
                                3,
                                4,
                                start),
                        start));

        await().atMost(PATIENCE)
                .until(() -> count("SELECT count(*) FROM usage_record WHERE attempt_id = '" + fresh + "'") == 1);
        // The old ones were not asked again first (round-robin by last lookup would have asked 20 of them).
        assertThat(count("SELECT count(*) FROM attempt WHERE request_key LIKE 'attempt-old-%'"
                        + " AND looked_up_at > now() - interval '25 seconds'"))
                .isZero();
    }

    @Test
    void lateResultOfASupersededAttemptIsRecordedAfterTheWinnerAndNeverApplied() throws Exception {
        fake().addScript(Script.forModel("fake-a", Step.delayed(3_000)));
        UUID job = aJob("late loser");
        UUID slow = aStartingAttempt(job, "fake-a");
        publish(slow, job);
        await().atMost(PATIENCE).until(() -> "unknown".equals(attemptState(slow)));
        // A reviewer superseded it and a fast attempt won.
        execute("UPDATE attempt SET state = 'superseded', reason = 'reviewer: provider A timed out' WHERE id = '" + slow
                + "'");
        UUID fast = aStartingAttempt(job, "fake-b");
        publish(fast, job);
        await().atMost(PATIENCE).until(() -> "completed".equals(jobState(job)));
        // Then the slow provider's answer is found: recorded (output, usage), never applied.
        await().atMost(PATIENCE)
                .until(() -> count("SELECT count(*) FROM usage_record WHERE attempt_id = '" + slow + "'") == 1);
        assertThat(attemptState(slow)).isEqualTo("superseded");
        assertThat(count("SELECT count(*) FROM generation WHERE attempt_id = '" + slow + "'"))
                .isEqualTo(1);
        assertThat(text("SELECT winning_attempt_id FROM job WHERE id = '" + job + "'"))
                .isEqualTo(fast.toString());
        assertThat(count("SELECT count(*) FROM applied_patch WHERE job_id = '" + job + "'"))
                .isEqualTo(1);
        assertThat(commitsOnJobBranch(job)).isEqualTo(1);
    }

    @Test
    void losingOutputOverTheSizeBoundIsDroppedAndItsDigestKept() {
        String bigPatch = "--- /dev/null\n+++ b/big\n@@ -0,0 +1,1000 @@\n" + "+x\n".repeat(1_000);
        fake().addScript(Script.forModel("fake-a", new Step(200, 1_500, false, false, bigPatch)));
        UUID job = aJob("big loser");
        UUID slow = aStartingAttempt(job, "fake-a");
        UUID fast = aStartingAttempt(job, "fake-b");
        publish(slow, job);
        publish(fast, job);
        await().atMost(PATIENCE).until(() -> "superseded".equals(attemptState(slow)));
        assertThat(count("SELECT count(*) FROM generation WHERE attempt_id = '" + slow + "'"))
                .isZero();
        assertThat(text("SELECT output_digest FROM attempt WHERE id = '" + slow + "'"))
                .startsWith("sha256:");
        assertThat(count("SELECT count(*) FROM generation WHERE attempt_id = '" + fast + "'"))
                .isEqualTo(1);
    }

    private void deadLetter(UUID attemptId, UUID jobId) {
        broker.withChannel(channel -> {
            channel.confirmSelect();
            channel.basicPublish(
                    AttemptTopology.DEAD_LETTER_EXCHANGE,
                    "",
                    null,
                    ("{\"attemptId\":\"" + attemptId + "\",\"jobId\":\"" + jobId + "\"}").getBytes());
            channel.waitForConfirmsOrDie(5_000);
            return null;
        });
    }
}
