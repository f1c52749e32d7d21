package dev.jobapi.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.jobapi.fakeprovider.Script;
import dev.jobapi.fakeprovider.Step;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * docs/design.md, rules 11 and 12: automatic fallback is earned by acceptance and stopped by the
 * kill switch.
 */
@QuarkusTest
@QuarkusTestResource(value = FakeProviderResource.class, restrictToAnnotatedClass = true)
class AutomaticFallbackTest extends WorkerTestSupport {

    private static final Duration PATIENCE = Duration.ofSeconds(20);

    @Test
    void definitiveFailureMovesToAnAcceptedProviderThroughTheOutbox() throws Exception {
        fake().addScript(Script.forModel("fake-a", Step.failing(400)));
        anAcceptanceRun("fake-b", "passed", Duration.ofHours(1));
        UUID job = aJobWithFallback("falls back", "fake-b");
        UUID first = aStartingAttempt(job, "fake-a");
        publish(first, job);

        UUID next = awaitFallbackAttempt(first);
        assertThat(text("SELECT provider FROM attempt WHERE id = '" + next + "'"))
                .isEqualTo("fake-b");
        // Announced through the outbox like any attempt; the API's relay publishes it, here the test does.
        assertThat(count("SELECT count(*) FROM outbox WHERE attempt_id = '" + next + "' AND sent_at IS NULL"))
                .isEqualTo(1);
        publish(next, job);
        await().atMost(PATIENCE).until(() -> "completed".equals(jobState(job)));
        assertThat(text("SELECT winning_attempt_id FROM job WHERE id = '" + job + "'"))
                .isEqualTo(next.toString());
        assertThat(attemptState(first)).isEqualTo("failed");
        assertThat(commitsOnJobBranch(job)).isEqualTo(1);
        assertThat(text("SELECT detail FROM job_event WHERE kind = 'fallback.automatic'"))
                .contains("provider fake-b after attempt " + first);
    }

    @Test
    void automaticFallbackToAProviderWithoutPassingAcceptanceIsRefusedWithTheReasonOnTheJob() {
        fake().addScript(Script.forModel("fake-a", Step.failing(400)));
        anAcceptanceRun("fake-b", "failed", Duration.ofHours(1));
        UUID job = aJobWithFallback("never accepted", "fake-b");
        UUID first = aStartingAttempt(job, "fake-a");
        publish(first, job);

        String refusal = awaitRefusal(job);
        assertThat(refusal)
                .startsWith("fake-b: the latest acceptance run of fake-b")
                .contains("failed");
        assertThat(count("SELECT count(*) FROM attempt WHERE job_id = '" + job + "'"))
                .isEqualTo(1);
    }

    @Test
    void providerWithNoFinishedAcceptanceOrAStaleOneIsSkippedForTheNextAcceptedOne() {
        fake().addScript(Script.forModel("fake-a", Step.failing(400)));
        anAcceptanceRun("fake-c", "passed", Duration.ofDays(8));
        anAcceptanceRun("fake-a2", "passed", Duration.ofMinutes(5));
        anAcceptanceRun("fake-b", "passed", Duration.ofMinutes(5));
        UUID job = aJobWithFallback("skips the unproven", "fake-d", "fake-a2", "fake-anthropic", "fake-c", "fake-b");
        UUID first = aStartingAttempt(job, "fake-a");
        publish(first, job);

        UUID next = awaitFallbackAttempt(first);
        assertThat(text("SELECT provider FROM attempt WHERE id = '" + next + "'"))
                .isEqualTo("fake-b");
        String refusals = text("SELECT string_agg(detail, ' | ' ORDER BY id) FROM job_event WHERE job_id = '" + job
                + "' AND kind = 'fallback.refused'");
        assertThat(refusals.split(" \\| "))
                .satisfiesExactly(
                        fakeD -> assertThat(fakeD).isEqualTo("fake-d: not configured in this worker"),
                        fakeA2 -> assertThat(fakeA2)
                                .isEqualTo("fake-a2: jobapi.provider.fake-a2.automatic-fallback is false"),
                        anthropic -> assertThat(anthropic)
                                .isEqualTo("fake-anthropic: no acceptance run of fake-anthropic has finished"),
                        fakeC -> assertThat(fakeC)
                                .startsWith("fake-c: the acceptance of fake-c passed at")
                                .endsWith("longer ago than PT168H"));
    }

    @Test
    void killSwitchStopsAutomaticFallbackToo() {
        fake().addScript(Script.forModel("fake-a", Step.failing(400)));
        anAcceptanceRun("fake-b", "passed", Duration.ofHours(1));
        execute("UPDATE fallback_switch SET enabled = false, reason = 'provider B returns garbage', set_by = 'otto'");
        UUID job = aJobWithFallback("switched off", "fake-b");
        UUID first = aStartingAttempt(job, "fake-a");
        publish(first, job);

        assertThat(awaitRefusal(job)).isEqualTo("kill switch is off (set by otto: provider B returns garbage)");
        assertThat(count("SELECT count(*) FROM attempt WHERE job_id = '" + job + "'"))
                .isEqualTo(1);
        assertWaitsForItsOwner(job, first);
    }

    @Test
    void ownerWhoseDailyBudgetIsSpentGetsNoAutomaticFallback() {
        fake().addScript(Script.forModel("fake-a", Step.failing(400)));
        anAcceptanceRun("fake-b", "passed", Duration.ofHours(1));
        UUID job = aJobWithFallback("over budget", "fake-b");
        execute("UPDATE job SET owner_id = 'thrifty' WHERE id = '" + job + "'");
        UUID first = aStartingAttempt(job, "fake-a");
        // Spent earlier today: 150 provider-reported tokens against thrifty's budget of 100.
        execute("INSERT INTO usage_record (attempt_id, owner_id, provider, prompt_tokens, completion_tokens, source,"
                + " recorded_at) VALUES ('" + first + "', 'thrifty', 'fake-a', 50, 100, 'provider_reported', now())");
        publish(first, job);

        assertThat(awaitRefusal(job))
                .isEqualTo("owner thrifty spent 150 provider-reported tokens today against a budget of 100");
        assertThat(count("SELECT count(*) FROM attempt WHERE job_id = '" + job + "'"))
                .isEqualTo(1);
        assertWaitsForItsOwner(job, first);
    }

    /**
     * Rule 19: an attempt held by an operator's pause moves on when its job may fall back, the held
     * attempt superseded; the paused provider is never called.
     */
    @Test
    void aJobHeldByAPauseFallsBackToAnAcceptedProvider() {
        execute("INSERT INTO provider_pause (provider, paused_by, paused_at, reason)"
                + " VALUES ('fake-a', 'otto', now(), 'outage')");
        anAcceptanceRun("fake-b", "passed", Duration.ofHours(1));
        UUID job = aJobWithFallback("paused, falls back", "fake-b");
        UUID held = aStartingAttempt(job, "fake-a");
        publish(held, job);

        await().atMost(PATIENCE).until(() -> "superseded".equals(attemptState(held)));
        assertThat(text("SELECT reason FROM attempt WHERE id = '" + held + "'"))
                .isEqualTo("provider fake-a is paused by an operator; moved to fake-b by automatic fallback");
        await().atMost(PATIENCE).until(() -> {
            relayOutbox();
            return "completed".equals(jobState(job));
        });
        assertThat(fake().requests()).noneMatch(r -> "fake-a".equals(r.model()));
    }

    /** A paused provider is no fallback target: the job waits for its owner, the pause named. */
    @Test
    void automaticFallbackNeverMovesToAPausedProvider() {
        fake().addScript(Script.forModel("fake-a", Step.failing(400)));
        anAcceptanceRun("fake-b", "passed", Duration.ofHours(1));
        execute("INSERT INTO provider_pause (provider, paused_by, paused_at, reason)"
                + " VALUES ('fake-b', 'otto', now(), 'outage')");
        UUID job = aJobWithFallback("target paused", "fake-b");
        UUID first = aStartingAttempt(job, "fake-a");
        publish(first, job);

        assertThat(awaitRefusal(job)).isEqualTo("fake-b: paused by an operator");
        assertThat(count("SELECT count(*) FROM attempt WHERE job_id = '" + job + "'"))
                .isEqualTo(1);
        assertWaitsForItsOwner(job, first);
    }

    @Test
    void unknownOutcomeNeverStartsAnAutomaticFallback() {
        fake().addScript(Script.forModel("fake-a", Step.delayed(30_000)));
        anAcceptanceRun("fake-b", "passed", Duration.ofHours(1));
        UUID job = aJobWithFallback("maybe still working", "fake-b");
        UUID first = aStartingAttempt(job, "fake-a");
        publish(first, job);

        await().atMost(PATIENCE).until(() -> "unknown".equals(attemptState(first)));
        assertThat(jobState(job)).isEqualTo("needs_review");
        assertThat(count("SELECT count(*) FROM attempt WHERE job_id = '" + job + "'"))
                .isEqualTo(1);
        assertThat(count("SELECT count(*) FROM job_event WHERE kind LIKE 'fallback.%'"))
                .isZero();
    }

    private UUID awaitFallbackAttempt(UUID failed) {
        String key = "automatic-fallback-after-" + failed;
        await().atMost(PATIENCE)
                .until(() -> count("SELECT count(*) FROM attempt WHERE idempotency_key = '" + key + "'") == 1);
        return UUID.fromString(text("SELECT id FROM attempt WHERE idempotency_key = '" + key + "'"));
    }

    /** A refused fallback leaves the job to its owner, in review with the failure stated (rule 14). */
    private void assertWaitsForItsOwner(UUID job, UUID failed) {
        await().atMost(PATIENCE).until(() -> "needs_review".equals(jobState(job)));
        assertThat(text("SELECT review_reason FROM job WHERE id = '" + job + "'"))
                .startsWith("attempt " + failed + " (fake-a) failed")
                .endsWith("ask for another attempt or cancel");
    }

    private String awaitRefusal(UUID job) {
        await().atMost(PATIENCE)
                .until(() -> count("SELECT count(*) FROM job_event WHERE job_id = '" + job
                                + "' AND kind = 'fallback.refused'")
                        > 0);
        return text("SELECT detail FROM job_event WHERE job_id = '" + job + "' AND kind = 'fallback.refused'");
    }
}
