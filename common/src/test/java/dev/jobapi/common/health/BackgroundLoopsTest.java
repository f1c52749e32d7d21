package dev.jobapi.common.health;

import static org.assertj.core.api.Assertions.assertThat;

import dev.jobapi.common.testing.HandClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The relay's thread ended on an OutOfMemoryError while readiness said UP. Every loop outlives what
 * a round throws, starts no round once shutdown began, and one that stops beating is reported stalled.
 */
class BackgroundLoopsTest {

    @Test
    void aRoundThatThrowsAnErrorIsLoggedAndStillBeatsSoTheNextRoundRuns() {
        HandClock clock = new HandClock();
        LoopHeartbeats heartbeats = new LoopHeartbeats(clock, new SimpleMeterRegistry());
        BackgroundLoops loops = new BackgroundLoops(heartbeats);
        loops.expect("relay-like", Duration.ofSeconds(1), Duration.ZERO);
        AtomicInteger rounds = new AtomicInteger();
        Runnable round = () -> {
            if (rounds.incrementAndGet() == 1) {
                throw new OutOfMemoryError("one user's stored inputs");
            }
        };

        clock.advance(Duration.ofSeconds(20));
        loops.round("relay-like", round); // the scheduler calls it; nothing may escape to it
        assertThat(heartbeats.ages()).containsEntry("relay-like", Duration.ZERO);
        loops.round("relay-like", round);
        assertThat(rounds).hasValue(2);
    }

    @Test
    void onceShutdownBeganTheSchedulerSkipsRoundsAndNoRoundStarts() {
        LoopHeartbeats heartbeats = new LoopHeartbeats(Clock.systemUTC(), new SimpleMeterRegistry());
        BackgroundLoops loops = new BackgroundLoops(heartbeats);
        AtomicInteger rounds = new AtomicInteger();
        assertThat(loops.test(null)).isFalse();
        loops.round("sweep-like", rounds::incrementAndGet);

        loops.stop(null);

        assertThat(loops.stopping()).isTrue();
        assertThat(loops.test(null)).as("skipExecutionIf").isTrue();
        loops.round("sweep-like", rounds::incrementAndGet); // one the scheduler had already fired
        assertThat(rounds).hasValue(1);
    }

    @Test
    void aLoopIsStalledAfterSixIntervalsPlusItsLongestRound() {
        HandClock clock = new HandClock();
        LoopHeartbeats heartbeats = new LoopHeartbeats(clock, new SimpleMeterRegistry());
        BackgroundLoops loops = new BackgroundLoops(heartbeats);
        loops.expect("reconciler", Duration.ofSeconds(30), Duration.ofMinutes(5));

        clock.advance(Duration.ofMinutes(8));
        assertThat(heartbeats.stalled()).isEmpty();
        clock.advance(Duration.ofMinutes(1).plusSeconds(1));
        assertThat(heartbeats.stalled()).containsOnlyKeys("reconciler");
    }

    @Test
    void aLoopThatStopsBeatingIsStalledAndTheCheckGoesDown() {
        HandClock clock = new HandClock();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        LoopHeartbeats heartbeats = new LoopHeartbeats(clock, registry);
        LoopHeartbeatCheck check = new LoopHeartbeatCheck(heartbeats);
        heartbeats.expect("outbox-relay", Duration.ofMinutes(1));
        heartbeats.expect("reconciler", Duration.ofMinutes(1));

        clock.advance(Duration.ofSeconds(50));
        heartbeats.beat("reconciler");
        assertThat(check.call().getStatus().name()).isEqualTo("UP");

        clock.advance(Duration.ofSeconds(20)); // the relay last beat 70 s ago: its thread is gone
        heartbeats.beat("reconciler");
        assertThat(heartbeats.stalled()).containsOnlyKeys("outbox-relay");
        assertThat(check.call().getStatus().name()).isEqualTo("DOWN");
        assertThat(check.call().getData().orElseThrow()).containsKey("outbox-relay-last-round-ms-ago");
        // The gauges an alert reads say which loop stopped.
        assertThat(registry.get("jobapi.background.loop.stalled")
                        .tag("loop", "outbox-relay")
                        .gauge()
                        .value())
                .isEqualTo(1);
        assertThat(registry.get("jobapi.background.loop.stalled")
                        .tag("loop", "reconciler")
                        .gauge()
                        .value())
                .isZero();
        assertThat(registry.get("jobapi.background.loop.round.age")
                        .tag("loop", "outbox-relay")
                        .gauge()
                        .value())
                .isEqualTo(70);
    }
}
