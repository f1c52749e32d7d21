package dev.jobapi.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A provider's configured per-minute limits (issue 32; docs/design.md, rule 21): across the worker's
 * threads, the calls a provider takes in a UTC minute never pass its requests or tokens per minute;
 * the rest are held, unclaimed and uncounted, until the next minute, and then go. The test stands in
 * for the API's outbox relay, and moves the minute on by moving the provider's row back a minute.
 */
@QuarkusTest
@QuarkusTestResource(value = FakeProviderResource.class, restrictToAnnotatedClass = true)
class RateLimitTest extends WorkerTestSupport {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    /** The test profile's jobapi.provider.fake-rated.requests-per-minute. */
    private static final int REQUESTS_PER_MINUTE = 3;

    /**
     * A minute that ends while the test runs would let the held calls go early. The wait is at most
     * the 25 s from second 35 to the next minute; the bound leaves room for the polls (CI at 64e475a
     * began at second 35 and timed out at 25.08 s).
     */
    @BeforeEach
    void startEarlyInAMinute() {
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(250))
                .until(() -> count("SELECT extract(second FROM now())::int") < 35);
    }

    @Test
    void aProvidersRequestsPerMinuteHoldTheRestUntilTheNextMinute() {
        List<UUID> jobs = new ArrayList<>();
        List<UUID> attempts = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            UUID job = aJob("rated call " + i);
            jobs.add(job);
            UUID attempt = aStartingAttempt(job, "fake-rated");
            attempts.add(attempt);
            publish(attempt, job);
        }

        await().atMost(PATIENCE)
                .until(() -> requestsMatching("rated call").size() == REQUESTS_PER_MINUTE
                        && attempts.stream()
                                        .filter(a -> events(a, "attempt.held") >= 1)
                                        .count()
                                == 2);
        assertThat(count("SELECT minute_requests FROM provider_health WHERE provider = 'fake-rated'"))
                .isEqualTo(REQUESTS_PER_MINUTE);
        assertThat(count("SELECT count(*) FROM provider_health WHERE provider = 'fake-rated'"
                        + " AND limited_until = date_trunc('minute', now()) + interval '1 minute'"))
                .isEqualTo(1);
        assertThat(text("SELECT detail FROM job_event WHERE kind = 'attempt.held' LIMIT 1"))
                .contains("3 requests per minute is used");
        assertThat(count("SELECT count(*) FROM attempt WHERE state = 'starting' AND lease_owner IS NULL"))
                .isEqualTo(2);

        nextMinute("fake-rated");
        await().atMost(PATIENCE).until(() -> {
            relayOutbox();
            return jobs.stream().allMatch(job -> "completed".equals(jobState(job)));
        });
        for (int i = 0; i < 5; i++) {
            assertThat(requestsMatching("rated call " + i)).hasSize(1);
        }
        assertThat(count("SELECT coalesce(sum(failed_deliveries), 0) FROM attempt"))
                .isZero();
        assertThat(deadLetters()).isEmpty();
    }

    /**
     * Each call counts at the most it may use: its prompt's bytes and framing, and max-tokens (1,000),
     * so two fit in 2,500 tokens and the third waits.
     */
    @Test
    void aProvidersTokensPerMinuteCountEachCallAtTheMostItMayUse() {
        List<UUID> jobs = new ArrayList<>();
        List<UUID> attempts = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            UUID job = aJob("metered call " + i);
            jobs.add(job);
            UUID attempt = aStartingAttempt(job, "fake-metered");
            attempts.add(attempt);
            publish(attempt, job);
        }

        await().atMost(PATIENCE)
                .until(() -> requestsMatching("metered call").size() == 2
                        && attempts.stream()
                                        .filter(a -> events(a, "attempt.held") >= 1)
                                        .count()
                                == 1);
        assertThat(count("SELECT minute_tokens FROM provider_health WHERE provider = 'fake-metered'"))
                .isBetween(2_000L, 2_500L);
        assertThat(text("SELECT detail FROM job_event WHERE kind = 'attempt.held' LIMIT 1"))
                .contains("2500 tokens per minute is used");

        nextMinute("fake-metered");
        await().atMost(PATIENCE).until(() -> {
            relayOutbox();
            return jobs.stream().allMatch(job -> "completed".equals(jobState(job)));
        });
        assertThat(requestsMatching("metered call")).hasSize(3);
    }

    /** The minute the provider's calls were counted in is over, as is the hold until its end. */
    private void nextMinute(String provider) {
        execute("UPDATE provider_health SET rate_minute = rate_minute - interval '1 minute',"
                + " limited_until = now() WHERE provider = '" + provider + "'");
    }
}
