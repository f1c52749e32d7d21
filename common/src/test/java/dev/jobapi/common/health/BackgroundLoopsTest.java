package dev.jobapi.common.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The relay's thread ended on an OutOfMemoryError while readiness said UP. Every loop outlives what
 * a round throws, and one that stops beating is reported stalled.
 */
class BackgroundLoopsTest {

    /** A clock the test moves by hand. */
    private static final class HandClock extends Clock {
        private Instant now = Instant.parse("2026-12-01T00:00:00Z");

        void advance(Duration by) {
            now = now.plus(by);
        }

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }
    }

    @Test
    void aRoundThatThrowsAnErrorDoesNotEndTheLoop() {
        LoopHeartbeats heartbeats = new LoopHeartbeats(Clock.systemUTC());
        BackgroundLoops loops = new BackgroundLoops(heartbeats);
        AtomicInteger rounds = new AtomicInteger();
        loops.start("relay-like", Duration.ofMillis(20), Duration.ZERO, () -> {
            if (rounds.incrementAndGet() == 1) {
                throw new OutOfMemoryError("one user's stored inputs");
            }
        });
        try {
            await().atMost(Duration.ofSeconds(5)).until(() -> rounds.get() >= 3);
        } finally {
            loops.stopAll(null);
        }
    }

    @Test
    void aLoopThatStopsBeatingIsStalledAndTheCheckGoesDown() {
        HandClock clock = new HandClock();
        LoopHeartbeats heartbeats = new LoopHeartbeats(clock);
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
    }
}
