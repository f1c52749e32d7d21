package dev.jobapi.chaos;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * After the faults: waits, with a bounded budget and a progress line every few seconds, until nothing is
 * left to happen: the client's sessions ended, no attempt starting, the outbox sent, no apply pending, no
 * job still accepted or running, no completion the provider stored left to reconcile, the work and delay
 * queues empty. A job whose attempts all failed is the owner's to move on: the drain asks for its fallback.
 */
final class Drain {

    record Progress(
            long starting, long unsent, long pendingApplies, long unsettledJobs, long unreconciled, long queued) {
        boolean quiet() {
            return starting == 0
                    && unsent == 0
                    && pendingApplies == 0
                    && unsettledJobs == 0
                    && unreconciled == 0
                    && queued == 0;
        }

        @Override
        public String toString() {
            return "queued " + queued + ", starting " + starting + ", outbox unsent " + unsent + ", applies pending "
                    + pendingApplies + ", jobs accepted/running " + unsettledJobs + ", completions to reconcile "
                    + unreconciled;
        }
    }

    private static final Duration FOLLOW_UP_EVERY = Duration.ofSeconds(10);
    /**
     * The fake provider's log grows with every request (erin's prompts are hundreds of KB each): read again every
     * 15 s, or at once when everything else is quiet, so the drain never ends on a stale view of it.
     */
    private static final Duration PROVIDER_LOG_EVERY = Duration.ofSeconds(15);
    /** The reconciler looks every 2 s and a redelivery comes within seconds: this long without change is stuck. */
    private static final Duration STUCK_AFTER = Duration.ofSeconds(90);

    private final Database database;
    private final Ctl ctl;
    private final Load load;
    private final FakeLog fakeLog;
    private final Random random;
    private final Map<String, Long> lastFollowUp = new HashMap<>();
    private Set<String> storedCompletions = Set.of();
    private long storedCompletionsAt = Long.MIN_VALUE;
    private int followUps;

    Drain(Database database, Ctl ctl, Load load, FakeLog fakeLog, long seed) {
        this.database = database;
        this.ctl = ctl;
        this.load = load;
        this.fakeLog = fakeLog;
        this.random = new Random(seed ^ 0xD7A1L);
    }

    /**
     * The drain's bound for a run: 120 s, or 30 s per minute of load, or 0.1 s per job (at 15 jobs a second the
     * backlog a slow machine leaves grows with the jobs, not the minutes), whichever is largest.
     */
    static Duration budget(int minutes, int jobs) {
        return Duration.ofSeconds(Math.max(120, Math.max(30L * minutes, jobs / 10)));
    }

    /**
     * Waits until quiet, the budget is spent or nothing has changed for {@link #STUCK_AFTER}; returns how long it
     * took, or null when it never got quiet.
     */
    Duration await(Duration budget) throws InterruptedException {
        long start = System.nanoTime();
        long deadline = start + budget.toNanos();
        long lastChange = start;
        Progress last = null;
        while (System.nanoTime() < deadline) {
            boolean sessionsEnded = load.awaitSessions(Duration.ZERO);
            try {
                Progress now = progress(sessionsEnded);
                if (sessionsEnded && now.quiet()) {
                    return Duration.ofNanos(System.nanoTime() - start);
                }
                if (!now.equals(last)) {
                    lastChange = System.nanoTime();
                }
                last = now;
            } catch (SQLException | RuntimeException e) {
                last = null;
                System.out.println("    drain: not readable yet: " + e.getMessage());
            }
            if (sessionsEnded && System.nanoTime() - lastChange > STUCK_AFTER.toNanos()) {
                System.out.println("    drain: no change for " + STUCK_AFTER.toSeconds() + "s; checking what is left");
                return null;
            }
            System.out.printf(
                    "    drain %3ds: %s%s%n",
                    Duration.ofNanos(System.nanoTime() - start).toSeconds(),
                    last == null ? "-" : last,
                    sessionsEnded ? "" : ", client sessions still following their jobs");
            Thread.sleep(3_000);
        }
        System.out.println("    drain budget of " + budget.toSeconds() + "s spent; last: " + last);
        return null;
    }

    int followUps() {
        return followUps;
    }

    private Progress progress(boolean sessionsEnded) throws SQLException, InterruptedException {
        try (Connection db = database.connect()) {
            // First, so the attempts a follow-up asks for are counted below; a round that asked for any
            // is never quiet, however fast they were counted (the drain ended once with them in the queue).
            int askedNow = sessionsEnded ? followUpStalledJobs(db) : 0;
            Map<String, Long> depths = ctl.queueDepths();
            long queued = depths.getOrDefault(Checker.WORK_QUEUE, 0L) + depths.getOrDefault(Checker.DELAY_QUEUE, 0L);
            long starting = askedNow + count(db, "SELECT count(*) FROM attempt WHERE state = 'starting'");
            long unsent = count(db, "SELECT count(*) FROM outbox WHERE sent_at IS NULL");
            long pending = count(db, "SELECT count(*) FROM applied_patch WHERE status = 'pending'");
            long unsettled = count(db, "SELECT count(*) FROM job WHERE state = ANY(?)", States.UNSETTLED_JOBS);
            boolean restQuiet = starting == 0 && unsent == 0 && pending == 0 && unsettled == 0 && queued == 0;
            long now = System.nanoTime();
            if (restQuiet || now - storedCompletionsAt > PROVIDER_LOG_EVERY.toNanos()) {
                storedCompletions = fakeLog.storedCompletionAttempts();
                storedCompletionsAt = now;
            }
            Set<String> stored = storedCompletions;
            long unreconciled = 0;
            try (PreparedStatement statement = db.prepareStatement("SELECT a.id FROM attempt a"
                    + " WHERE a.state = ANY(?)"
                    + " AND NOT EXISTS (SELECT 1 FROM usage_record u WHERE u.attempt_id = a.id)")) {
                statement.setArray(1, db.createArrayOf("text", States.LOOKUP_ATTEMPTS));
                try (ResultSet rs = statement.executeQuery()) {
                    while (rs.next()) {
                        if (stored.contains(rs.getString(1))) {
                            unreconciled++;
                        }
                    }
                }
            }
            return new Progress(starting, unsent, pending, unsettled, unreconciled, queued);
        }
    }

    /**
     * Jobs whose every attempt failed or lost wait in review for their owner: ask for the fallback, as
     * a user would. Not a job whose patch the target refused or whose owner's budget refused its claim
     * (another attempt is refused the same way), and never a job left accepted or running with nothing
     * open: that is stranded, and invariant 6 names it.
     */
    /** @return how many fallbacks this round asked for */
    private int followUpStalledJobs(Connection db) throws SQLException, InterruptedException {
        Map<String, String> stalled = new HashMap<>();
        try (PreparedStatement statement = db.prepareStatement("SELECT j.id, j.owner_id FROM job j"
                + " WHERE j.state = 'needs_review' AND j.winning_attempt_id IS NULL"
                + " AND NOT EXISTS (SELECT 1 FROM attempt a"
                + " WHERE a.job_id = j.id AND a.state = ANY(?))"
                + " AND NOT EXISTS (SELECT 1 FROM attempt a"
                + " WHERE a.job_id = j.id AND a.reason LIKE 'apply refused by the target%')"
                // Nor one its owner's money budget refused (SpendBudget): another attempt is refused
                // the same way, and asking for it every round kept the drain from ever being quiet.
                + " AND NOT EXISTS (SELECT 1 FROM attempt a"
                + " WHERE a.job_id = j.id AND a.reason LIKE '%budget%no request sent')")) {
            // Open attempts may still bring a result, and a succeeded one is the job's: no fallback for either.
            statement.setArray(1, db.createArrayOf("text", States.OPEN_OR_SUCCEEDED_ATTEMPTS));
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    stalled.put(rs.getString(1), rs.getString(2));
                }
            }
        }
        long now = System.nanoTime();
        int asked = 0;
        for (var job : stalled.entrySet()) {
            Long last = lastFollowUp.get(job.getKey());
            if (last != null && now - last < FOLLOW_UP_EVERY.toNanos()) {
                continue;
            }
            lastFollowUp.put(job.getKey(), now);
            followUps++;
            load.fallback(job.getKey(), job.getValue(), "drain-fallback-" + followUps, random);
            asked++;
        }
        return asked;
    }

    /** Counts with {@code sql}; {@code states}, when given, binds its one parameter as a text array. */
    private static long count(Connection db, String sql, String... states) throws SQLException {
        try (PreparedStatement statement = db.prepareStatement(sql)) {
            if (states.length > 0) {
                statement.setArray(1, db.createArrayOf("text", states));
            }
            try (ResultSet rs = statement.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** Where the soak's database is. */
    record Database(String url, String user, String password) {
        /** How long {@link #read} waits out a database away: a clustered failover takes up to about two minutes. */
        static final java.time.Duration THROUGH_FAILOVER = java.time.Duration.ofMinutes(3);

        Connection connect() throws SQLException {
            return DriverManager.getConnection(url, user, password);
        }

        /** One read on a connection of its own, tried again each 2 s for {@link #THROUGH_FAILOVER}. */
        <T> T read(Read<T> read) throws InterruptedException {
            java.time.Instant giveUp = java.time.Instant.now().plus(THROUGH_FAILOVER);
            while (true) {
                try (Connection db = connect()) {
                    return read.on(db);
                } catch (SQLException e) {
                    if (java.time.Instant.now().isAfter(giveUp)) {
                        throw new IllegalStateException("cannot read the soak's database: " + e.getMessage(), e);
                    }
                    Thread.sleep(2_000);
                }
            }
        }
    }

    /** A read of the soak's database. */
    interface Read<T> {
        T on(Connection db) throws SQLException;
    }
}
