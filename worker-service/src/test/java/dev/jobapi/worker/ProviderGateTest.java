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

    /** jobapi.provider-gate.probe-calls, by default. */
    private static final int PROBE_CALLS = 5;

    /**
     * The breaker opens once the minimum of calls all failed; while it is open, attempts are held
     * (never called, failed, counted or dead-lettered); after the open time they probe (three held,
     * five probe calls), and their successes close the breaker.
     */
    @Test
    void aFailingProviderOpensItsBreakerHoldsTheRestAndItsProbesCloseIt() {
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
        // The call is counted for the gate in a transaction after its answer is recorded.
        await().atMost(PATIENCE).until(() -> "closed".equals(breaker("fake-a")));
        assertThat(probeClaims()).isEqualTo(3);
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
        breakerOfFakeA("open", "now() + interval '1 hour'", 0, 0);
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
        // The call is counted for the gate in a transaction after its answer is recorded. one probe call
        // of five, a success; the refused attempt took none.
        await().atMost(PATIENCE).until(() -> probesCounted().equals("1 calls, 0 faults, 0 out"));
    }

    /**
     * A half-open breaker's probe that the provider declines with a {@code retry-after} brings no
     * verdict: once the limit ends, the gate's round frees it (its attempt is not in flight) and the
     * held attempt probes again. Kept, the breaker stayed half open until the probe timeout (5 min).
     */
    @Test
    void aProbeHeldByARetryAfterProbesAgainWhenTheLimitEnds() {
        fake().addScript(Script.of("limited probe", Step.failing(429).withHeader("retry-after", "2"), Step.ok()));
        breakerOfFakeA("open", "now()", 0, 0);
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
        // The calls are counted for the gate in transactions after their answers are recorded: the probe
        // the limit held brought no verdict; the two that went, two successes.
        await().atMost(PATIENCE).until(() -> probesCounted().equals("2 calls, 0 faults, 0 out"));
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
        breakerOfFakeA("open", "now() + interval '1 hour'", 0, 0);
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

    /**
     * A probe whose worker died (its attempt no longer in flight: the lease ran out) brings no
     * verdict: a held attempt probes in its place at once, not after the probe timeout (5 min), and
     * its success closes the breaker. Here the dead one holds the last of the five probe calls (four
     * counted, two of them faults: undecided). Waiting for the timeout held every call of the provider
     * meanwhile (CI's soak: a worker SIGKILLed a second after it took the probe, 847 attempts held).
     */
    @Test
    void aProbeWhoseWorkerDiedLetsAnotherAttemptProbeWithoutWaitingForTheTimeout() {
        UUID deadJob = aJob("the probe of a dead worker");
        UUID dead = aStartingAttempt(deadJob, "fake-a");
        execute("UPDATE attempt SET lease_owner = 'dead-worker', lease_expires_at = now() - interval '1 second',"
                + " sent_at = now() - interval '31 seconds' WHERE id = '" + dead + "'");
        breakerOfFakeA("half_open", "now()", PROBE_CALLS - 1, 2);
        execute("INSERT INTO provider_probe (attempt_id, provider, claimed_at) VALUES ('" + dead
                + "', 'fake-a', now() - interval '31 seconds')");
        UUID job = aJob("probes instead");
        UUID attempt = aStartingAttempt(job, "fake-a");
        publish(attempt, job);

        await().atMost(PATIENCE).until(() -> {
            relayOutbox();
            return "completed".equals(jobState(job));
        });
        assertThat(text("SELECT detail FROM job_event WHERE attempt_id = '" + attempt
                        + "' AND kind = 'attempt.claimed'"))
                .contains("the probe of fake-a's circuit breaker");
        await().atMost(PATIENCE).until(() -> "closed".equals(breaker("fake-a")));
    }

    /**
     * A half-open breaker judges its probe calls together: one fault among successes, below the
     * fault share, does not open it again; the successes close it. One probe alone reopened it for
     * every unlucky call: at the chaos soak's provider, failing a third of its calls, CI's drain ended
     * with 774 attempts held behind probes that kept failing.
     */
    @Test
    void oneFailedProbeAmongSuccessesClosesTheBreakerWithoutOpeningItAgain() {
        fake().addScript(Script.of("probe, unlucky", Step.failing(503)));
        breakerOfFakeA("open", "now()", 0, 0);
        UUID unluckyJob = aJob("probe, unlucky"); // the oldest held: the first probe announced
        UUID unlucky = aStartingAttempt(unluckyJob, "fake-a");
        publish(unlucky, unluckyJob);
        await().atMost(PATIENCE).until(() -> "failed".equals(attemptState(unlucky)));
        // The call is counted for the gate after its answer is recorded.
        await().atMost(PATIENCE)
                .until(() -> count("SELECT probe_faults FROM provider_health WHERE provider = 'fake-a'") == 1);
        assertThat(breaker("fake-a")).isEqualTo("half_open");

        List<UUID> jobs = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            UUID job = aJob("probe, healthy " + i);
            jobs.add(job);
            publish(aStartingAttempt(job, "fake-a"), job);
        }
        await().atMost(PATIENCE).until(() -> {
            relayOutbox();
            return jobs.stream().allMatch(job -> "completed".equals(jobState(job)));
        });
        await().atMost(PATIENCE).until(() -> "closed".equals(breaker("fake-a")));
        assertThat(probeClaims()).isEqualTo(4);
    }

    /**
     * Claims that arrive together at a half-open breaker take its probe calls and no more: with ten
     * slow calls at once, five probe and the rest are held until the breaker closes. The count of the
     * probes taken, read in the statement that waited for the row's lock, saw none of the probes
     * committed meanwhile: a soak's claims took "the" one probe eight times in a second.
     */
    @Test
    void claimsArrivingTogetherTakeNoMoreThanTheProbeCalls() {
        fake().addScript(Script.of("together", Step.delayed(1_500)));
        breakerOfFakeA("open", "now()", 0, 0);
        List<UUID> jobs = new ArrayList<>();
        List<UUID> attempts = new ArrayList<>();
        for (int i = 0; i < 2 * PROBE_CALLS; i++) {
            UUID job = aJob("together " + i);
            jobs.add(job);
            attempts.add(aStartingAttempt(job, "fake-a"));
        }
        for (int i = 0; i < jobs.size(); i++) {
            publish(attempts.get(i), jobs.get(i));
        }
        await().atMost(PATIENCE).until(() -> {
            relayOutbox();
            return jobs.stream().allMatch(job -> "completed".equals(jobState(job)));
        });
        assertThat(probeClaims()).isEqualTo(PROBE_CALLS);
        assertThat(events(attempts.get(attempts.size() - 1), "attempt.held")).isGreaterThanOrEqualTo(1);
        await().atMost(PATIENCE).until(() -> "closed".equals(breaker("fake-a")));
    }

    /**
     * A healthy call that is no probe writes nothing to its provider's row: each worker tallies them
     * and writes the tally in its gate's round. Every call wrote the row, in a commit of its own, and
     * the workers' calls took turns on its lock (bench: 2 workers slower than 1). Every call is still
     * counted.
     */
    @Test
    void healthyCallsAreCountedTogetherNotOneWriteEach() {
        // Each write of fake-tallied's row, with the calls it added to the window (a new window starts afresh).
        execute("CREATE TABLE IF NOT EXISTS test_health_write (calls int)");
        execute("CREATE OR REPLACE FUNCTION test_count_health_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                + " INSERT INTO test_health_write VALUES (CASE WHEN TG_OP = 'UPDATE'"
                + " AND NEW.window_started_at = OLD.window_started_at THEN NEW.window_calls - OLD.window_calls"
                + " ELSE NEW.window_calls END); RETURN NULL; END $$");
        execute("CREATE TRIGGER test_health_write AFTER INSERT OR UPDATE ON provider_health FOR EACH ROW"
                + " WHEN (NEW.provider = 'fake-tallied') EXECUTE FUNCTION test_count_health_write()");
        try {
            int calls = 12;
            List<UUID> jobs = new ArrayList<>();
            for (int i = 0; i < calls; i++) {
                UUID job = aJob("healthy " + i);
                jobs.add(job);
                publish(aStartingAttempt(job, "fake-tallied"), job);
            }
            await().atMost(PATIENCE).until(() -> jobs.stream().allMatch(job -> "completed".equals(jobState(job))));
            await().atMost(PATIENCE)
                    .until(() -> count("SELECT coalesce(sum(calls), 0) FROM test_health_write") == calls);
            assertThat(count("SELECT count(*) FROM test_health_write WHERE calls > 0"))
                    .isLessThan(calls / 2);
        } finally {
            execute("DROP TRIGGER test_health_write ON provider_health");
            execute("DROP TABLE test_health_write");
            execute("DROP FUNCTION test_count_health_write()");
        }
    }

    /**
     * Sets fake-a's breaker. An upsert: a worker's gate round may have written the row already, with
     * healthy calls it tallied in an earlier test.
     */
    private void breakerOfFakeA(String state, String retryAt, int probeCalls, int probeFaults) {
        execute("INSERT INTO provider_health (provider, state, window_started_at, opened_at, retry_at, probe_calls,"
                + " probe_faults, last_fault, updated_at) VALUES ('fake-a', '" + state + "', now(), now(), " + retryAt
                + ", " + probeCalls + ", " + probeFaults + ", 'test outage', now()) ON CONFLICT (provider) DO UPDATE"
                + " SET state = excluded.state, opened_at = excluded.opened_at, retry_at = excluded.retry_at,"
                + " probe_calls = excluded.probe_calls, probe_faults = excluded.probe_faults,"
                + " last_fault = excluded.last_fault");
    }

    private String probesCounted() {
        return text("SELECT probe_calls || ' calls, ' || probe_faults || ' faults, ' || (SELECT count(*) FROM"
                + " provider_probe) || ' out' FROM provider_health WHERE provider = 'fake-a'");
    }

    private long probeClaims() {
        return count("SELECT count(*) FROM job_event WHERE kind = 'attempt.claimed'"
                + " AND detail LIKE '%the probe of fake-a''s circuit breaker%'");
    }

    private String breaker(String provider) {
        return text("SELECT state FROM provider_health WHERE provider = '" + provider + "'");
    }
}
