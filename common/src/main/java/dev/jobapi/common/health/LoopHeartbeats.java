package dev.jobapi.common.health;

import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * When each background loop (outbox relay, recovery sweep, pruner, acceptance runner, consumer)
 * last finished a round. A loop registers how long it may go without a beat; one whose last beat is
 * older is stalled: its thread died, hangs, or every round fails. {@link LoopHeartbeatCheck} reports
 * that, so Kubernetes restarts the pod.
 */
@ApplicationScoped
public class LoopHeartbeats {

    /** A loop is never stalled sooner than this: a round may wait on a slow database for a while. */
    private static final Duration MIN_STALE_AFTER = Duration.ofSeconds(30);

    private record Loop(Duration staleAfter, Instant lastBeat) {}

    private final Map<String, Loop> loops = new ConcurrentHashMap<>();
    private final Clock clock;

    LoopHeartbeats(Clock clock) {
        this.clock = clock;
    }

    /** Registers a loop that is stalled once it goes {@code staleAfter} without a beat; its clock starts now. */
    public void expect(String loop, Duration staleAfter) {
        Duration bound = staleAfter.compareTo(MIN_STALE_AFTER) < 0 ? MIN_STALE_AFTER : staleAfter;
        loops.put(loop, new Loop(bound, clock.instant()));
    }

    /** The loop finished a round. */
    public void beat(String loop) {
        loops.computeIfPresent(loop, (name, known) -> new Loop(known.staleAfter(), clock.instant()));
    }

    /** Each registered loop's age since its last beat, by name. */
    public Map<String, Duration> ages() {
        Instant now = clock.instant();
        Map<String, Duration> ages = new TreeMap<>();
        loops.forEach((name, loop) -> ages.put(name, Duration.between(loop.lastBeat(), now)));
        return ages;
    }

    /** The loops whose last beat is older than their bound. */
    public Map<String, Duration> stalled() {
        Instant now = clock.instant();
        Map<String, Duration> stalled = new TreeMap<>();
        loops.forEach((name, loop) -> {
            Duration age = Duration.between(loop.lastBeat(), now);
            if (age.compareTo(loop.staleAfter()) > 0) {
                stalled.put(name, age);
            }
        });
        return stalled;
    }
}
