package dev.jobapi.api.bulk;

import dev.jobapi.api.config.JobApiConfig;
import dev.jobapi.common.health.BackgroundLoops;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.Scheduled.ConcurrentExecution;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Clock;
import java.time.Instant;

/**
 * Works through bulk actions too large for their request, and those a crash interrupted: each
 * round takes every running bulk action, oldest first, one batch at a time, until the round's
 * budget is spent (the next round continues). Every replica runs it; a batch locks its bulk
 * action's row with {@code SKIP LOCKED}, so replicas share the work and never process one batch twice.
 */
@ApplicationScoped
public class BulkRunner {

    /** This loop's scheduler identity and heartbeat name. */
    static final String LOOP = "bulk-runner";

    private final BulkActions bulk;
    private final BackgroundLoops loops;
    private final JobApiConfig.Bulk config;
    private final Clock clock;

    BulkRunner(BulkActions bulk, BackgroundLoops loops, JobApiConfig config, Clock clock) {
        this.bulk = bulk;
        this.loops = loops;
        this.config = config.bulk();
        this.clock = clock;
    }

    void expectHeartbeat(@Observes StartupEvent event) {
        loops.expect(LOOP, config.interval(), config.roundBudget().multipliedBy(2));
    }

    @Scheduled(
            identity = LOOP,
            every = "${jobapi.bulk.interval}",
            concurrentExecution = ConcurrentExecution.SKIP,
            skipExecutionIf = BackgroundLoops.class)
    void scheduledRound() {
        loops.round(LOOP, this::round);
    }

    private void round() {
        Instant end = clock.instant().plus(config.roundBudget());
        for (long id : bulk.running()) {
            while (clock.instant().isBefore(end) && !loops.stopping() && bulk.step(id)) {
                // One batch per step, committed; the loop stops at the budget or at shutdown.
            }
        }
    }
}
