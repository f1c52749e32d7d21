package dev.jobapi.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.jobapi.fakeprovider.Script;
import dev.jobapi.fakeprovider.Step;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * docs/design.md, rule 21: each provider's health gate, shared by every worker through PostgreSQL,
 * over the real database, broker and fake provider. The test stands in for the API's outbox relay.
 */
@QuarkusTest
@QuarkusTestResource(value = FakeProviderResource.class, restrictToAnnotatedClass = true)
class ProviderGateTest extends WorkerTestSupport {

    private static final Duration PATIENCE = Duration.ofSeconds(20);

    /** jobapi.provider-gate.minimum-calls in the test profile. */
    private static final int MINIMUM_CALLS = 5;

    /**
     * The breaker opens once the minimum of calls all failed; while it is open, attempts are held
     * (never called, failed, counted or dead-lettered); after the open time one of them probes, and
     * its success closes the breaker and sends the others on.
     */
    @Test
    void aFailingProviderOpensItsBreakerHoldsTheRestAndOneProbeClosesIt() {
        fake().addScript(Script.of("outage", Step.failing(503)));
        List<UUID> burned = new ArrayList<>();
        for (int i = 0; i < MINIMUM_CALLS; i++) {
            UUID job = aJob("outage, burned " + i);
            UUID attempt = aStartingAttempt(job, "fake-a");
            burned.add(attempt);
            publish(attempt, job);
        }
        await().atMost(PATIENCE).until(() -> burned.stream().allMatch(a -> "failed".equals(attemptState(a))));
        await().atMost(PATIENCE).until(() -> "open".equals(breaker("fake-a")));

        List<UUID> heldJobs = new ArrayList<>();
        List<UUID> held = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            UUID job = aJob("outage, held " + i);
            UUID attempt = aStartingAttempt(job, "fake-a");
            heldJobs.add(job);
            held.add(attempt);
            publish(attempt, job);
        }
        await().atMost(PATIENCE).until(() -> held.stream().allMatch(a -> events(a, "attempt.held") >= 1));
        for (UUID attempt : held) {
            assertThat(attemptState(attempt)).isEqualTo("starting");
            assertThat(text("SELECT lease_owner FROM attempt WHERE id = '" + attempt + "'"))
                    .isNull();
            assertThat(count("SELECT failed_deliveries FROM attempt WHERE id = '" + attempt + "'"))
                    .isZero();
        }
        assertThat(requestsMatching("outage, held")).isEmpty();
        assertThat(text("SELECT detail FROM job_event WHERE kind = 'attempt.held' LIMIT 1"))
                .contains("circuit breaker is open");

        fake().clearScripts(); // the outage ends
        await().atMost(PATIENCE).until(() -> {
            relayOutbox();
            return heldJobs.stream().allMatch(job -> "completed".equals(jobState(job)));
        });
        assertThat(breaker("fake-a")).isEqualTo("closed");
        assertThat(count("SELECT count(*) FROM job_event WHERE kind = 'attempt.claimed'"
                        + " AND detail LIKE '%the probe of fake-a''s circuit breaker%'"))
                .isEqualTo(1);
        for (int i = 0; i < 3; i++) {
            assertThat(requestsMatching("outage, held " + i)).hasSize(1);
        }
        assertThat(deadLetters()).isEmpty();
    }

    /**
     * An attempt its owner's money budget cannot pay for fails at its claim without a request, even
     * behind an open breaker: it is not held for a call that could never go, and never takes the
     * breaker's probe. When the open time is up, another owner's held attempt probes and closes the
     * breaker. Behind the gate, the refused attempts were held, and each took the probe in turn, one
     * per gate round (CI: 190 of them, 2 s apart, in SpendBudgetTest; chaos run 15: every owner's
     * jobs waited behind one owner's spent budget).
     */
    @Test
    void anAttemptOverItsOwnersBudgetFailsBehindAnOpenBreakerAndNeverTakesTheProbe() {
        execute("INSERT INTO provider_price (provider, model, input_usd_per_mtok, output_usd_per_mtok,"
                + " effective_from, set_by, reason) VALUES ('fake-a', 'fake-a', 3, 15, now() - interval '1 minute',"
                + " 'otto', 'test')");
        execute("INSERT INTO spend_budget (owner_id, period, limit_usd, soft_percent, set_by, set_at, reason)"
                + " VALUES ('dave', 'day', 0.001, 80, 'otto', now(), 'too small for one call')");
        execute("INSERT INTO provider_health (provider, state, window_started_at, opened_at, retry_at, last_fault,"
                + " updated_at) VALUES ('fake-a', 'open', now(), now(), now() + interval '1 hour', 'test outage',"
                + " now())");
        UUID refusedJob = aJob("refused for the budget");
        execute("UPDATE job SET owner_id = 'dave' WHERE id = '" + refusedJob + "'");
        UUID refused = aStartingAttempt(refusedJob, "fake-a");
        UUID heldJob = aJob("held, then the probe");
        UUID held = aStartingAttempt(heldJob, "fake-a");
        publish(refused, refusedJob);
        publish(held, heldJob);

        await().atMost(PATIENCE).until(() -> "failed".equals(attemptState(refused)));
        assertThat(text("SELECT reason FROM attempt WHERE id = '" + refused + "'"))
                .contains("budget")
                .endsWith("no request sent");
        assertThat(events(refused, "attempt.held")).isZero();
        await().atMost(PATIENCE).until(() -> events(held, "attempt.held") == 1);

        execute("UPDATE provider_health SET retry_at = now() WHERE provider = 'fake-a'"); // the open time is up
        await().atMost(PATIENCE).until(() -> {
            relayOutbox();
            return "completed".equals(jobState(heldJob));
        });
        assertThat(requestsMatching("refused for the budget")).isEmpty();
        assertThat(text("SELECT detail FROM job_event WHERE attempt_id = '" + held + "' AND kind = 'attempt.claimed'"))
                .contains("the probe of fake-a's circuit breaker");
        assertThat(breaker("fake-a")).isEqualTo("closed");
    }

    /**
     * A half-open breaker's probe that the provider declines with a {@code retry-after} brings no
     * verdict: the probe is given back, and once the limit ends a held attempt probes again and its
     * success closes the breaker. Kept, the breaker stayed half open until the probe timeout (5 min).
     */
    @Test
    void aProbeHeldByARetryAfterProbesAgainWhenTheLimitEnds() {
        fake().addScript(Script.of("limited probe", Step.failing(429).withHeader("retry-after", "2"), Step.ok()));
        execute("INSERT INTO provider_health (provider, state, window_started_at, opened_at, retry_at, last_fault,"
                + " updated_at) VALUES ('fake-a', 'open', now(), now(), now(), 'test outage', now())");
        UUID limitedJob = aJob("limited probe");
        UUID limited = aStartingAttempt(limitedJob, "fake-a"); // the oldest held: the first probe
        UUID nextJob = aJob("after the probe was limited");
        aStartingAttempt(nextJob, "fake-a");

        await().atMost(PATIENCE).until(() -> {
            relayOutbox();
            return "completed".equals(jobState(limitedJob)) && "completed".equals(jobState(nextJob));
        });
        assertThat(events(limited, "attempt.held")).isGreaterThanOrEqualTo(1);
        assertThat(requestsMatching("limited probe")).hasSize(2); // the 429, then the probe again
        assertThat(requestsMatching("after the probe was limited")).hasSize(1);
        assertThat(breaker("fake-a")).isEqualTo("closed");
    }

    /**
     * A provider that declines with a {@code retry-after} holds its attempt (handed back unclaimed,
     * its money reservation released) and every other call until the time is up; then all go on.
     */
    @Test
    void aRetryAfterHoldsEveryCallOfTheProviderUntilItEnds() {
        fake().addScript(Script.of("limited", Step.failing(429).withHeader("retry-after", "2"), Step.ok()));
        UUID first = aJob("limited, first");
        UUID firstAttempt = aStartingAttempt(first, "fake-a");
        publish(firstAttempt, first);
        await().atMost(PATIENCE).until(() -> events(firstAttempt, "attempt.held") == 1);
        assertThat(text("SELECT lease_owner FROM attempt WHERE id = '" + firstAttempt + "'"))
                .isNull();
        assertThat(text("SELECT limit_reason FROM provider_health WHERE provider = 'fake-a'"))
                .contains("429");

        UUID second = aJob("limited, second");
        UUID secondAttempt = aStartingAttempt(second, "fake-a");
        publish(secondAttempt, second);
        await().atMost(PATIENCE).until(() -> events(secondAttempt, "attempt.held") == 1);
        assertThat(requestsMatching("limited, second")).isEmpty();

        await().atMost(PATIENCE).until(() -> {
            relayOutbox();
            return "completed".equals(jobState(first)) && "completed".equals(jobState(second));
        });
        assertThat(requestsMatching("limited, first")).hasSize(2);
        assertThat(requestsMatching("limited, second")).hasSize(1);
        assertThat(deadLetters()).isEmpty();
    }

    /**
     * A held attempt whose job may fall back moves to an accepted provider whose gate is open: the
     * held attempt superseded, a new one started through the outbox.
     */
    @Test
    void aHeldAttemptWhoseJobMayFallBackMovesToAnAcceptedHealthyProvider() {
        execute("INSERT INTO provider_health (provider, state, window_started_at, opened_at, retry_at, last_fault,"
                + " updated_at) VALUES ('fake-a', 'open', now(), now(), now() + interval '1 hour', 'test outage',"
                + " now())");
        anAcceptanceRun("fake-b", "passed", Duration.ofHours(1));
        UUID job = aJobWithFallback("held, falls back", "fake-b");
        UUID held = aStartingAttempt(job, "fake-a");
        publish(held, job);

        await().atMost(PATIENCE).until(() -> "superseded".equals(attemptState(held)));
        assertThat(text("SELECT reason FROM attempt WHERE id = '" + held + "'"))
                .contains("circuit breaker is open")
                .contains("moved to fake-b");
        await().atMost(PATIENCE).until(() -> {
            relayOutbox();
            return "completed".equals(jobState(job));
        });
        assertThat(text("SELECT provider FROM attempt WHERE id = (SELECT winning_attempt_id FROM job WHERE id = '" + job
                        + "')"))
                .isEqualTo("fake-b");
        assertThat(fake().requests()).noneMatch(r -> "fake-a".equals(r.model()));
    }

    private String breaker(String provider) {
        return text("SELECT state FROM provider_health WHERE provider = '" + provider + "'");
    }

    private long events(UUID attempt, String kind) {
        return count("SELECT count(*) FROM job_event WHERE attempt_id = '" + attempt + "' AND kind = '" + kind + "'");
    }
}
