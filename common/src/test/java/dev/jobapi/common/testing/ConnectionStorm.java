package dev.jobapi.common.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.agroal.api.AgroalDataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * Many request threads asking a pool for connections at once, each at its own moment (as requests
 * arrive after a failover, not in lockstep), each holding what it got for a short transaction. It
 * tells how many distinct database sessions the pool handed out: how far the pool could grow again.
 */
public final class ConnectionStorm {

    private static final Duration HOLD = Duration.ofMillis(50);
    private static final int MAX_ARRIVAL_GAP_MILLIS = 100;

    /**
     * What a storm got.
     *
     * @param sessions distinct backend processes the pool handed out
     * @param acquisitions connections handed out
     * @param failures the pool's failures to hand one out, by their causes' messages
     */
    public record Result(int sessions, int acquisitions, Map<String, Integer> failures) {}

    private ConnectionStorm() {}

    /**
     * docs/design.md, "Running clustered": after a failover every pooled connection is gone and
     * requests arrive faster than a loaded machine connects. Agroal makes connections one at a time
     * and cancels, with an interrupt, one whose waiter gave up. A connect that the interrupt can stop
     * (pgjdbc's {@code loginTimeout} waits for it on another thread, interruptibly) is thrown away,
     * its time on the pool's one creating thread wasted and its connecting thread left behind; a
     * connect the interrupt cannot stop lands in the pool for the next waiter. The pool behind
     * {@link SlowConnectDatabaseResource} is emptied and stormed with slow connects.
     */
    public static void assertAnEmptiedPoolRefillsWithoutThrowingConnectsAway(AgroalDataSource pool)
            throws InterruptedException {
        SlowConnectDatabaseResource.slowConnects(true);
        try {
            pool.flush(AgroalDataSource.FlushMode.ALL);
            Result storm = run(pool, 40, Duration.ofSeconds(12));
            assertThat(storm.failures().keySet())
                    .as("no connect the pool started was interrupted and thrown away")
                    .noneMatch(failure -> failure.contains("Interrupted while attempting to connect"));
            // Back to back, 400 ms connects refill about 30 sessions in 12 s.
            assertThat(storm.sessions())
                    .as("sessions handed out; failures: %s", storm.failures())
                    .isGreaterThanOrEqualTo(8);
        } finally {
            SlowConnectDatabaseResource.slowConnects(false);
        }
    }

    static Result run(DataSource pool, int threads, Duration length) throws InterruptedException {
        long end = System.nanoTime() + length.toNanos();
        Set<Integer> sessions = ConcurrentHashMap.newKeySet();
        AtomicInteger acquisitions = new AtomicInteger();
        Map<String, Integer> failures = new ConcurrentHashMap<>();
        List<Thread> requests = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            Thread request = new Thread(
                    () -> {
                        while (System.nanoTime() < end) {
                            try {
                                Thread.sleep(ThreadLocalRandom.current().nextInt(MAX_ARRIVAL_GAP_MILLIS));
                                sessions.add(useOnce(pool));
                                acquisitions.incrementAndGet();
                            } catch (SQLException e) {
                                failures.merge(causes(e), 1, Integer::sum);
                            } catch (InterruptedException e) {
                                return;
                            }
                        }
                    },
                    "connection-storm-" + i);
            request.start();
            requests.add(request);
        }
        for (Thread request : requests) {
            request.join();
        }
        return new Result(sessions.size(), acquisitions.get(), Map.copyOf(failures));
    }

    /** "message <- its cause's message <- ...": the pool's own words and the driver's beneath them. */
    private static String causes(Throwable failure) {
        StringBuilder chain = new StringBuilder(String.valueOf(failure.getMessage()));
        for (Throwable cause = failure.getCause(); cause != null; cause = cause.getCause()) {
            chain.append(" <- ").append(cause.getMessage());
        }
        return chain.toString();
    }

    private static int useOnce(DataSource pool) throws SQLException, InterruptedException {
        try (Connection connection = pool.getConnection();
                Statement statement = connection.createStatement();
                ResultSet backend = statement.executeQuery("SELECT pg_backend_pid()")) {
            backend.next();
            Thread.sleep(HOLD.toMillis());
            return backend.getInt(1);
        }
    }
}
