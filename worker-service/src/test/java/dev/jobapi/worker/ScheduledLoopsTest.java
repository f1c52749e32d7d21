package dev.jobapi.worker;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.hasItem;

import dev.jobapi.common.health.LoopHeartbeats;
import io.quarkus.scheduler.Scheduler;
import io.quarkus.scheduler.Trigger;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.Test;

/**
 * The worker's background loops are the scheduler's jobs: each one runs on its schedule, beats its
 * heartbeat every round, and the liveness check reads those heartbeats.
 */
@QuarkusTest
class ScheduledLoopsTest {

    private static final List<String> LOOPS = List.of("reconciler", "acceptance", "attempt-consumer", "provider-gate");

    @Inject
    Scheduler scheduler;

    @Inject
    LoopHeartbeats heartbeats;

    @Inject
    Clock clock;

    @Test
    void everyLoopIsAScheduledJobThatBeatsItsHeartbeatEachRound() {
        assertThat(scheduler.getScheduledJobs()).extracting(Trigger::getId).containsAll(LOOPS);

        // Every loop beats after this instant (its age falls below the time since), so rounds run
        // on their own: 1 s for the sweep and acceptance in the test profile, 2 s for the consumer.
        Instant since = clock.instant();
        await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
            Map<String, Duration> ages = heartbeats.ages();
            Duration elapsed = Duration.between(since, clock.instant());
            assertThat(ages).containsKeys(LOOPS.toArray(String[]::new));
            LOOPS.forEach(loop -> assertThat(ages.get(loop)).as(loop).isLessThan(elapsed));
        });
        assertThat(heartbeats.stalled()).isEmpty();

        int port = ConfigProvider.getConfig().getValue("quarkus.management.test-port", Integer.class);
        given().port(port)
                .get("/q/health/live")
                .then()
                .statusCode(200)
                .body("checks.find { it.name == 'background-loops' }.status", org.hamcrest.Matchers.equalTo("UP"))
                .body(
                        "checks.find { it.name == 'background-loops' }.data.keySet()",
                        hasItem("reconciler-last-round-ms-ago"));
    }

    @Test
    void aPausedLoopStopsBeating() {
        scheduler.pause("reconciler");
        try {
            Duration before = heartbeats.ages().get("reconciler");
            // A round already fired may still end and beat; after that, nothing for several intervals.
            await().pollDelay(Duration.ofSeconds(4))
                    .atMost(Duration.ofSeconds(10))
                    .untilAsserted(() ->
                            assertThat(heartbeats.ages().get("reconciler")).isGreaterThan(Duration.ofSeconds(3)));
            assertThat(before).isNotNull();
        } finally {
            scheduler.resume("reconciler");
        }
    }
}
