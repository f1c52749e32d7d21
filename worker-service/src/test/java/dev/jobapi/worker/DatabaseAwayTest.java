package dev.jobapi.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.jobapi.common.database.DatabaseAway;
import dev.jobapi.worker.config.WorkerConfig;
import dev.jobapi.worker.service.AttemptSteps;
import dev.jobapi.worker.service.LeaseKeeper;
import io.agroal.api.AgroalDataSource;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.scheduler.Scheduler;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.hibernate.exception.JDBCConnectionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * docs/design.md, "Running clustered": a database primary that vanishes (a failover, a partition)
 * hangs no thread, drops no paid answer, and lets no lease run out for want of a renewal thread.
 */
@QuarkusTest
@QuarkusTestResource(value = FakeProviderResource.class, restrictToAnnotatedClass = true)
@TestProfile(DatabaseAwayTest.ShortTimeouts.class)
class DatabaseAwayTest extends WorkerTestSupport {

    /**
     * A 3 s lease (renewed every second) and a 10 s JDBC socket timeout: short enough for a test,
     * longer than a lease, so a renewal stuck until the timeout would let another lease run out.
     */
    public static class ShortTimeouts implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("jobapi.worker.lease", "3s", "JOBAPI_DB_SOCKET_TIMEOUT_SECONDS", "10");
        }
    }

    @Inject
    AttemptSteps steps;

    @Inject
    LeaseKeeper leases;

    @Inject
    WorkerConfig config;

    @Inject
    AgroalDataSource dataSource;

    @Inject
    Scheduler scheduler;

    @BeforeEach
    void noSweepExpiresTheLeasesUnderTest() {
        scheduler.pause("reconciler");
    }

    @AfterEach
    void sweepAgain() {
        scheduler.resume("reconciler");
    }

    @Test
    void aStepWaitsOutADatabaseThatIsAwayInsteadOfDroppingWhatItHolds() {
        UUID attempt = aStartingAttempt(aJob("database away"), "fake-a");
        AtomicInteger runs = new AtomicInteger();
        String result = steps.run(attempt, null, step -> {
            if (runs.incrementAndGet() <= 2) {
                throw new JDBCConnectionException(
                        "the primary went away", new SQLException("An I/O error occurred", "08006"));
            }
            return "recorded";
        });
        assertThat(result).isEqualTo("recorded");
        assertThat(runs).hasValue(3);
    }

    /**
     * A connection lost during the commit leaves the commit's outcome unknown: a primary shut down
     * while the commit waited for its synchronous standby keeps it. The step is not run again on
     * what it would then find done (its plan for after the commit would be lost); its failure goes
     * to the caller, whose recovery starts from what is committed. The commit here fails as a lost
     * connection does (SQLSTATE 08006), raised by a deferred trigger at the commit itself.
     */
    @Test
    void aStepWhoseCommitLostItsConnectionIsNotRunAgain() {
        UUID attempt = aStartingAttempt(aJob("commit unknown"), "fake-a");
        execute("CREATE TABLE IF NOT EXISTS test_commit_refusal (id int)");
        execute("CREATE OR REPLACE FUNCTION test_refuse_commit() RETURNS trigger LANGUAGE plpgsql AS"
                + " $$ BEGIN RAISE EXCEPTION 'connection lost at commit' USING ERRCODE = '08006'; END $$");
        execute("DROP TRIGGER IF EXISTS test_refuse_commit ON test_commit_refusal");
        execute("CREATE CONSTRAINT TRIGGER test_refuse_commit AFTER INSERT ON test_commit_refusal"
                + " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION test_refuse_commit()");
        AtomicInteger runs = new AtomicInteger();
        try {
            assertThatThrownBy(() -> steps.run(attempt, null, step -> {
                        runs.incrementAndGet();
                        em.createNativeQuery("INSERT INTO test_commit_refusal VALUES (1)")
                                .executeUpdate();
                        return "planned";
                    }))
                    .satisfies(
                            failure -> assertThat(DatabaseAway.isCause(failure)).isTrue());
            assertThat(runs).hasValue(1);
        } finally {
            execute("DROP TABLE test_commit_refusal");
        }
    }

    @Test
    void aStatementOnAConnectionThatWentSilentGivesUpAtTheSocketTimeout() {
        assertThatThrownBy(() -> QuarkusTransaction.requiringNew()
                        .run(() -> em.createNativeQuery("SELECT pg_sleep(60)").getSingleResult()))
                .satisfies(failure -> assertThat(DatabaseAway.isCause(failure))
                        .as("a socket timeout is the database being away")
                        .isTrue());
    }

    @Test
    void aLeaseWhoseRenewalHangsDelaysNoOtherLease() throws Exception {
        UUID job = aJob("renewals");
        UUID stuck = aStartingAttempt(job, "fake-a");
        UUID healthy = aStartingAttempt(job, "fake-a");
        execute("UPDATE attempt SET lease_owner = '" + config.worker().idOrPid()
                + "', lease_expires_at = now() + interval '3 seconds' WHERE job_id = '" + job + "'");
        CountDownLatch callsEnd = new CountDownLatch(1);
        try (Connection locker = dataSource.getConnection()) {
            // Another transaction holds the stuck attempt's row: its renewals wait on the lock.
            locker.setAutoCommit(false);
            try (Statement lock = locker.createStatement()) {
                lock.execute("SELECT 1 FROM attempt WHERE id = '" + stuck + "' FOR UPDATE");
            }
            CompletableFuture<Object> stuckCall =
                    CompletableFuture.supplyAsync(() -> leases.whileHeld(stuck, () -> awaitQuietly(callsEnd)));
            CompletableFuture<Object> healthyCall =
                    CompletableFuture.supplyAsync(() -> leases.whileHeld(healthy, () -> awaitQuietly(callsEnd)));
            try {
                // Renewed every second by 3 s: live 6 s on only if it was renewed after the other hung.
                await().atMost(Duration.ofSeconds(15))
                        .until(() -> count("SELECT count(*) FROM attempt WHERE id = '" + healthy
                                        + "' AND lease_expires_at > created_at + interval '6 seconds'")
                                == 1);
            } finally {
                callsEnd.countDown();
                locker.rollback();
            }
            stuckCall.get(30, TimeUnit.SECONDS);
            healthyCall.get(30, TimeUnit.SECONDS);
        }
    }

    private static Object awaitQuietly(CountDownLatch latch) {
        try {
            return latch.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
