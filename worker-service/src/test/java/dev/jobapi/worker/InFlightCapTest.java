package dev.jobapi.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.jobapi.fakeprovider.Script;
import dev.jobapi.fakeprovider.Step;
import dev.jobapi.worker.provider.InFlightCaps;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Caps on calls in flight (issue 32; docs/design.md, rule 21): a provider's and an owner's calls at
 * once never pass their cap, across the worker's 16 threads; the calls past it are held, unclaimed
 * and uncounted, and go once a slot frees. The test stands in for the API's outbox relay.
 */
@QuarkusTest
@QuarkusTestResource(value = FakeProviderResource.class, restrictToAnnotatedClass = true)
class InFlightCapTest extends WorkerTestSupport {

    private static final Duration PATIENCE = Duration.ofSeconds(60);

    @Inject
    InFlightCaps caps;

    /** jobapi.provider.fake-capped.max-in-flight in the test profile. */
    private static final int PROVIDER_CAP = 2;

    private static final String IN_FLIGHT = "SELECT count(*) FROM attempt a JOIN job j ON j.id = a.job_id"
            + " WHERE a.state = 'starting' AND a.lease_owner IS NOT NULL";

    @Test
    void aProvidersCallsInFlightNeverPassItsCapAndTheHeldOnesGoWhenSlotsFree() throws Exception {
        fake().addScript(Script.of("capped call", Step.delayed(1_000)));
        List<UUID> jobs = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            UUID job = aJob("capped call " + i);
            jobs.add(job);
            publish(aStartingAttempt(job, "fake-capped"), job);
        }

        long most = mostInFlightUntilDone(IN_FLIGHT + " AND a.provider = 'fake-capped'", jobs);

        assertThat(most).isEqualTo(PROVIDER_CAP);
        for (int i = 0; i < 6; i++) {
            assertThat(requestsMatching("capped call " + i)).hasSize(1);
        }
        assertThat(count("SELECT count(*) FROM job_event WHERE kind = 'attempt.held'"
                        + " AND detail LIKE 'provider fake-capped has 2 calls in flight%'"))
                .isPositive();
        assertThat(count("SELECT coalesce(sum(failed_deliveries), 0) FROM attempt"))
                .isZero();
        assertThat(deadLetters()).isEmpty();
    }

    @Test
    void anOwnersCallsInFlightNeverPassTheCapAnOperatorSetWhateverTheProvider() throws Exception {
        execute("INSERT INTO owner_share (owner_id, max_in_flight, set_by, reason, updated_at)"
                + " VALUES ('carol', 1, 'otto', 'one at a time', now())");
        fake().addScript(Script.of("carol call", Step.delayed(700)));
        List<UUID> jobs = new ArrayList<>();
        String[] providers = {"fake-a", "fake-b", "fake-a", "fake-b"};
        for (int i = 0; i < providers.length; i++) {
            UUID job = aJob("carol call " + i);
            execute("UPDATE job SET owner_id = 'carol' WHERE id = '" + job + "'");
            jobs.add(job);
            publish(aStartingAttempt(job, providers[i]), job);
        }
        UUID others = aJob("someone else call");
        publish(aStartingAttempt(others, "fake-a"), others);

        long most = mostInFlightUntilDone(IN_FLIGHT + " AND j.owner_id = 'carol'", jobs);

        assertThat(most).isEqualTo(1);
        await().atMost(PATIENCE).until(() -> "completed".equals(jobState(others)));
        assertThat(count("SELECT count(*) FROM job_event WHERE kind = 'attempt.held'"
                        + " AND detail LIKE 'owner carol has 1 calls in flight%'"))
                .isPositive();
    }

    /**
     * A call's end gives its capped provider's free slot to a held attempt at once, not at the gate's
     * next round (up to 2 s of an idle slot each time); with no slot free it announces nothing.
     */
    @Test
    void aCallsEndGivesTheFreedSlotToAHeldAttemptAtOnce() {
        List<UUID> inFlight = new ArrayList<>();
        for (int i = 0; i < PROVIDER_CAP; i++) {
            inFlight.add(aStartingAttempt(aJob("in flight " + i), "fake-capped"));
        }
        execute("UPDATE attempt SET lease_owner = 'worker-x', lease_expires_at = now() + interval '1 minute'");
        UUID held = aStartingAttempt(aJob("held for a slot"), "fake-capped");
        String announced = "SELECT count(*) FROM outbox WHERE attempt_id = '" + held + "' AND sent_at IS NULL";

        caps.callEnded("fake-capped");
        assertThat(count(announced)).isZero();

        execute("UPDATE attempt SET state = 'failed', reason = 'test' WHERE id = '" + inFlight.get(0) + "'");
        caps.callEnded("fake-capped");
        assertThat(count(announced)).isEqualTo(1);
    }

    /**
     * Relays the outbox (the held attempts announced again) until every job completed, sampling the
     * calls in flight every 10 ms; the most seen.
     */
    private long mostInFlightUntilDone(String inFlight, List<UUID> jobs) throws Exception {
        AtomicLong most = new AtomicLong();
        ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
        sampler.scheduleWithFixedDelay(
                () -> most.accumulateAndGet(count(inFlight), Math::max), 0, 10, TimeUnit.MILLISECONDS);
        try {
            await().atMost(PATIENCE).pollInterval(Duration.ofMillis(200)).until(() -> {
                relayOutbox();
                return jobs.stream().allMatch(job -> "completed".equals(jobState(job)));
            });
        } finally {
            sampler.shutdown();
            assertThat(sampler.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        }
        return most.get();
    }
}
