package dev.jobapi.common.health;

import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.ScheduledExecution;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.interceptor.Interceptor;
import java.time.Duration;
import org.jboss.logging.Logger;

/**
 * What every scheduled background loop (recovery sweep, retention pruner, acceptance runner,
 * consumer subscription) shares. The loops themselves are declared: {@code @Scheduled} methods with
 * {@code concurrentExecution = SKIP} (a round still running is never overlapped by the next) and
 * {@code skipExecutionIf = BackgroundLoops.class}, so no round starts once shutdown began. Each
 * method hands its work to {@link #round}: whatever a round throws is logged and the next round runs
 * (an {@link OutOfMemoryError} in one request must not end a loop for good), and each round, failed
 * or not, beats the loop's heartbeat. A loop whose rounds stop ending (a round hangs, the scheduler
 * stopped) makes the service unhealthy ({@link LoopHeartbeatCheck}); a dependency that fails every
 * round is what the database and broker checks report.
 */
@ApplicationScoped
public class BackgroundLoops implements Scheduled.SkipPredicate {

    private static final Logger LOG = Logger.getLogger(BackgroundLoops.class);

    /** Rounds a loop may miss before it counts as stalled. */
    private static final int MISSED_ROUNDS = 6;

    private final LoopHeartbeats heartbeats;
    private volatile boolean stopping;

    BackgroundLoops(LoopHeartbeats heartbeats) {
        this.heartbeats = heartbeats;
    }

    /**
     * Registers the loop's heartbeat, which counts as stalled after {@link #MISSED_ROUNDS} intervals
     * plus its longest legitimate round without a beat.
     *
     * @param longestRound how long one round may legitimately take (a provider call, a batch)
     */
    public void expect(String name, Duration interval, Duration longestRound) {
        heartbeats.expect(name, interval.multipliedBy(MISSED_ROUNDS).plus(longestRound));
    }

    /** Runs one round of the loop {@code name} unless shutdown began; always beats its heartbeat after. */
    public void round(String name, Runnable round) {
        if (stopping) {
            return;
        }
        try {
            round.run();
        } catch (Throwable e) { // the loop must outlive an Error too; see above
            LOG.errorf(e, "Round of %s failed; the next round retries", name);
        } finally {
            heartbeats.beat(name);
        }
    }

    /**
     * Whether shutdown began. A long round asks between two items of work and stops there: every item
     * is its own transaction, so what it leaves is what a crash would, and the next process resumes it.
     */
    public boolean stopping() {
        return stopping;
    }

    /** The scheduler's question before each round: skip it once shutdown began. */
    @Override
    public boolean test(ScheduledExecution execution) {
        return stopping;
    }

    /** First of every shutdown observer, so no round starts while the consumer drains or beans stop. */
    void stop(@Observes @Priority(Interceptor.Priority.PLATFORM_BEFORE) ShutdownEvent event) {
        stopping = true;
    }
}
