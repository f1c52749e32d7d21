package dev.jobapi.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.jobapi.common.health.LoopHeartbeats;
import dev.jobapi.worker.repository.AttemptWork;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.scheduler.Scheduler;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * docs/design.md, "Running clustered": every worker sweeps, and the sweep divides its work. Two
 * sweeps meet here as two transactions: the first takes its batch and holds it uncommitted while the
 * second asks for the same work, then asks again once the first committed. Neither second ask may
 * find anything: an attempt is announced again, and its provider asked, once per window however
 * many workers sweep.
 */
@QuarkusTest
@QuarkusTestResource(value = FakeProviderResource.class, restrictToAnnotatedClass = true)
class SweepAcrossWorkersTest extends WorkerTestSupport {

    private static final Duration REANNOUNCE_AFTER = Duration.ofSeconds(3);

    @Inject
    AttemptWork work;

    @Inject
    Scheduler scheduler;

    @Inject
    LoopHeartbeats heartbeats;

    @BeforeEach
    void onlyThisTestSweeps() {
        scheduler.pause("reconciler");
        // The pause stops the next rounds, not one under way: the first round of an application just
        // started (another test profile ran before) can take a second, and announced this test's
        // stranded attempts before its own sweeps looked (seen once, run after TracingTest).
        await().atMost(Duration.ofMinutes(1)).until(this::noRoundUnderWay);
    }

    /** Whether the round the scheduler started last has finished: its heartbeat came after. */
    private boolean noRoundUnderWay() {
        Instant started = scheduler.getScheduledJob("reconciler").getPreviousFireTime();
        Instant lastBeat = Instant.now().minus(heartbeats.ages().get("reconciler"));
        return started == null || lastBeat.isAfter(started);
    }

    @AfterEach
    void sweepAgain() {
        scheduler.resume("reconciler");
    }

    @Test
    void aStrandedAttemptIsAnnouncedAgainOnceHoweverManyWorkersSweepAtOnce() throws Exception {
        UUID job = aJob("stranded across workers");
        List<UUID> stranded = List.of(aStartingAttempt(job, "fake-a"), aStartingAttempt(job, "fake-a"));
        execute("UPDATE attempt SET created_at = now() - interval '1 hour' WHERE job_id = '" + job + "'");
        execute("INSERT INTO outbox (attempt_id, job_id, created_at, sent_at) SELECT id, job_id,"
                + " now() - interval '1 hour', now() - interval '1 hour' FROM attempt WHERE job_id = '" + job + "'");

        List<List<UUID>> asks = whileAnotherSweepHoldsItsBatch(() -> work.reannounceUnclaimed(REANNOUNCE_AFTER, 20));

        assertThat(asks.get(0)).containsExactlyInAnyOrderElementsOf(stranded);
        assertThat(asks.get(1)).as("asked while the first sweep held its batch").isEmpty();
        assertThat(asks.get(2)).as("asked after the first sweep committed").isEmpty();
        assertThat(count("SELECT count(*) FROM outbox WHERE sent_at IS NULL AND job_id = '" + job + "'"))
                .isEqualTo(2);
    }

    @Test
    void aLostAnswerIsLookedUpByOneWorkerPerWindowHoweverManySweepAtOnce() throws Exception {
        UUID job = aJob("lookups across workers");
        UUID lost = aStartingAttempt(job, "fake-a");
        execute("UPDATE attempt SET state = 'unknown', reason = 'read timed out', sent_at = now() - interval"
                + " '1 minute' WHERE id = '" + lost + "'");
        Instant now = Instant.now();

        List<List<UUID>> asks =
                whileAnotherSweepHoldsItsBatch(() -> work.takeDueLookups(now, now.minus(Duration.ofHours(1)), 20));

        assertThat(asks.get(0)).containsExactly(lost);
        assertThat(asks.get(1)).as("asked while the first sweep held its batch").isEmpty();
        assertThat(asks.get(2)).as("asked after the first sweep committed").isEmpty();
    }

    /**
     * Runs {@code take} in a transaction that stays open while the same is asked in a second
     * transaction, then once more after the first committed; returns the three answers in order.
     */
    private static List<List<UUID>> whileAnotherSweepHoldsItsBatch(Supplier<List<UUID>> take) throws Exception {
        CountDownLatch taken = new CountDownLatch(1);
        CountDownLatch commit = new CountDownLatch(1);
        CompletableFuture<List<UUID>> first = CompletableFuture.supplyAsync(
                () -> QuarkusTransaction.requiringNew().call(() -> {
                    List<UUID> batch = take.get();
                    taken.countDown();
                    if (!commit.await(30, TimeUnit.SECONDS)) {
                        throw new IllegalStateException("the test never let the first sweep commit");
                    }
                    return batch;
                }));
        if (!taken.await(30, TimeUnit.SECONDS)) {
            first.get(1, TimeUnit.SECONDS); // surfaces the first sweep's failure
        }
        List<UUID> whileHeld = QuarkusTransaction.requiringNew().call(take::get);
        commit.countDown();
        List<UUID> firstBatch = first.get(30, TimeUnit.SECONDS);
        List<UUID> afterCommit = QuarkusTransaction.requiringNew().call(take::get);
        return List.of(firstBatch, whileHeld, afterCommit);
    }
}
