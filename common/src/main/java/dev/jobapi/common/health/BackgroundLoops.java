package dev.jobapi.common.health;

import io.quarkus.runtime.ShutdownEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * Runs each scheduled background loop (recovery sweep, pruner, acceptance runner) on its own daemon
 * thread. A round that throws, whatever it throws, is logged and the next round runs: a scheduled
 * task that throws is otherwise never run again, and an {@link OutOfMemoryError} in one request must
 * not end a loop for good. Each round, failed or not, beats the loop's heartbeat: a loop whose rounds
 * stop ending (its thread died or hangs) makes the service unhealthy ({@link LoopHeartbeatCheck});
 * a dependency that fails every round is what the database and broker checks report.
 */
@ApplicationScoped
public class BackgroundLoops {

    private static final Logger LOG = Logger.getLogger(BackgroundLoops.class);

    /** Rounds a loop may miss before it counts as stalled. */
    private static final int MISSED_ROUNDS = 6;

    private final LoopHeartbeats heartbeats;
    private final List<ScheduledExecutorService> running = new CopyOnWriteArrayList<>();

    BackgroundLoops(LoopHeartbeats heartbeats) {
        this.heartbeats = heartbeats;
    }

    /**
     * Starts {@code round} every {@code interval} (after the previous round ends).
     *
     * @param longestRound how long one round may legitimately take (a provider call, a batch)
     */
    public void start(String name, Duration interval, Duration longestRound, Runnable round) {
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
        heartbeats.expect(name, interval.multipliedBy(MISSED_ROUNDS).plus(longestRound));
        long every = interval.toMillis();
        scheduler.scheduleWithFixedDelay(
                () -> {
                    try {
                        round.run();
                    } catch (Throwable e) { // the loop must outlive an Error too; see above
                        LOG.errorf(e, "Round of %s failed; the next round retries", name);
                    } finally {
                        heartbeats.beat(name);
                    }
                },
                every,
                every,
                TimeUnit.MILLISECONDS);
        running.add(scheduler);
    }

    void stopAll(@Observes ShutdownEvent event) {
        running.forEach(ScheduledExecutorService::shutdownNow);
    }
}
