package dev.jobapi.common.health;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
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
 * that, so Kubernetes restarts the pod, and each loop's age and stalled flag are gauges, so an
 * alert can say which loop stopped (k8s/addons/monitoring).
 */
@ApplicationScoped
public class LoopHeartbeats {

    /** A loop is never stalled sooner than this: a round may wait on a slow database for a while. */
    private static final Duration MIN_STALE_AFTER = Duration.ofSeconds(30);

    private record Loop(Duration staleAfter, Instant lastBeat) {}

    private final Map<String, Loop> loops = new ConcurrentHashMap<>();
    private final Clock clock;
    private final MeterRegistry registry;

    LoopHeartbeats(Clock clock, MeterRegistry registry) {
        this.clock = clock;
        this.registry = registry;
    }

    /** Registers a loop that is stalled once it goes {@code staleAfter} without a beat; its clock starts now. */
    public void expect(String loop, Duration staleAfter) {
        Duration bound = staleAfter.compareTo(MIN_STALE_AFTER) < 0 ? MIN_STALE_AFTER : staleAfter;
        loops.put(loop, new Loop(bound, clock.instant()));
        Gauge.builder("jobapi.background.loop.round.age", this, heartbeats -> heartbeats.ageSeconds(loop))
                .baseUnit("seconds")
                .tag("loop", loop)
                .description("Seconds since the background loop last finished a round")
                // Strong: a weakly held bean of an application restarted in the same JVM (tests) left
                // its series reading NaN, which the Prometheus scrape leaves out.
                .strongReference(true)
                .register(registry);
        Gauge.builder("jobapi.background.loop.stalled", this, heartbeats -> heartbeats.isStalled(loop) ? 1 : 0)
                .tag("loop", loop)
                .description("1 while the background loop has gone past its bound without finishing a round, else 0")
                .strongReference(true)
                .register(registry);
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

    private double ageSeconds(String name) {
        Loop loop = loops.get(name);
        return loop == null
                ? Double.NaN
                : Duration.between(loop.lastBeat(), clock.instant()).toMillis() / 1000.0;
    }

    private boolean isStalled(String name) {
        return stalled().containsKey(name);
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
