package dev.jobapi.worker.service;

import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.database.CurrentTransaction;
import dev.jobapi.common.database.DatabaseAway;
import dev.jobapi.common.database.PlainTransactions;
import dev.jobapi.common.database.WriteConflict;
import dev.jobapi.common.job.Job;
import io.quarkus.narayana.jta.QuarkusTransaction;
import jakarta.inject.Singleton;
import jakarta.persistence.EntityManager;
import jakarta.persistence.OptimisticLockException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.StatelessSession;
import org.jboss.logging.Logger;

/**
 * The one way the worker changes an attempt and its job: each step is one transaction that loads
 * the attempt and its job once (one plain SQL query, no row lock), decides from what it loaded, and
 * writes what it changed back with each row's version checked: by one plain statement each, but
 * the election, which goes through a stateless Hibernate session and the job's {@code @Version}.
 * Each write is a compare-and-swap. When another transaction changed either row in between
 * (a second worker, the sweep, a user's action in the API), the write fails, the transaction rolls
 * back and the step runs again on what is now committed: it decides again, never on stale state.
 * Whatever the step holds in hand (a provider's answer, a paid result) survives the rerun, because it
 * lives outside the transaction.
 *
 * <p>The two rows are not in the session's persistence context: the load, the snapshots, the dirty
 * check and the flush of a managed attempt and job were more than a third of the worker's CPU per
 * job (bench/ANALYSIS.md). A step compares each row with what it loaded and writes only what changed;
 * the claim starts the job in its own statement, and the step then compares the job with that write.
 *
 * <p>A step runs first in a plain transaction ({@link PlainTransactions}): no transaction manager,
 * no ORM session, about a tenth of the worker's CPU a job (bench/ANALYSIS.md). Its hot paths (the
 * claim, the record, the election, the apply in the database) reach the database through {@link
 * CurrentTransaction} and run there whole. A branch that needs the ORM (a fallback's attempt created
 * through the session, a sweep's native query, any {@code @Transactional(MANDATORY)} bean) fails in
 * a plain transaction before anything is committed ({@link CurrentTransaction#neededJta}), and the
 * step runs again, under JTA, on what is committed: the rerun a write conflict gets.
 *
 * <p>rocket-rides-atomic's {@code atomic_phase} is the model: a step either commits whole or not at
 * all, and side effects outside the database (metrics, a provider call, a git commit) happen only
 * after its commit.
 */
@Singleton
public class AttemptSteps {

    private static final Logger LOG = Logger.getLogger(AttemptSteps.class);

    /** How often a step runs before its conflict is thrown to the caller (the message then comes back). */
    static final int RUNS = 5;

    /**
     * How long a step waits out a database that is away before its failure is thrown: past a
     * failover (under a second with a synchronous standby) and a fast restart, so a paid answer in
     * hand is not dropped for want of a connection.
     */
    static final Duration DATABASE_PATIENCE = Duration.ofSeconds(60);

    private static final Duration FIRST_PAUSE = Duration.ofMillis(200);
    private static final Duration LONGEST_PAUSE = Duration.ofSeconds(5);

    /**
     * What a step sees: the attempt and its job as committed when it began, the step's time, and
     * what the step itself stored, so that a later part of the same step need not read it back.
     */
    public static final class Loaded {
        private final CurrentTransaction transaction;
        private final Attempt attempt;
        private final Job job;
        private final Attempt.Changeable attemptAsLoaded;
        /** The job as its row holds it for this step: as loaded, or as the claim's statement wrote it. */
        private Job.Changeable jobAsStored;

        private final Instant now;
        private final List<Runnable> afterCommit = new ArrayList<>();
        private byte[] storedPatch;
        private boolean reportedUsageStored;
        private boolean jobLocked;
        private boolean jobCheckedAtCommit;

        private Loaded(
                CurrentTransaction transaction,
                Attempt attempt,
                Attempt.Changeable attemptAsLoaded,
                Job job,
                Job.Changeable jobAsStored,
                Instant now) {
            this.transaction = transaction;
            this.attempt = attempt;
            this.attemptAsLoaded = attemptAsLoaded;
            this.job = job;
            this.jobAsStored = jobAsStored;
            this.now = now;
        }

        /**
         * Takes the job's row lock, for a decision that reads the job's other attempts (whether one
         * is still open), which no version of this attempt or job would guard: two attempts failing
         * at once must not both see the other open and leave the job with no fallback. A job
         * changed since the load fails the lock's version check, and the step runs again.
         *
         * <p>On the step's connection: Hibernate's lock of the same row cost 7 % of the worker's CPU
         * (bench/ANALYSIS.md), for one statement.
         */
        public void lockJob() {
            if (jobLocked) {
                return;
            }
            boolean unchanged = transaction.onConnection(connection -> {
                try (PreparedStatement lock =
                        connection.prepareStatement("SELECT 1 FROM job WHERE id = ? AND version = ? FOR UPDATE")) {
                    lock.setObject(1, job.id());
                    lock.setLong(2, job.version());
                    try (ResultSet row = lock.executeQuery()) {
                        return row.next();
                    }
                }
            });
            if (!unchanged) {
                throw new OptimisticLockException("Job " + job.id() + " changed since this step loaded it");
            }
            jobLocked = true;
        }

        /**
         * Makes the step's commit depend on the job being as loaded, for a write of a row of its own
         * that no version of the job guards (the apply key's reservation): the commit of a step whose
         * job another transaction changed since the load fails, and the step runs again. A job the
         * step changed is written back with its version checked anyway; an unchanged one is checked
         * by {@link #lockJob} as the step ends. Unlike {@link #lockJob} now, this does not keep
         * others off the job while the step decides: only the version is checked. On the election's
         * path, where the job is written, it spares a round trip a job.
         */
        public void checkJobAtCommit() {
            jobCheckedAtCommit = true;
        }

        /**
         * Starts the job, whose row the claim's own statement started ({@link
         * dev.jobapi.worker.repository.AttemptWork#claim}): in memory as written there, one version
         * up, so that the step's end writes it only when something after the claim changed it again.
         * The claim's statement writes the start alone: a job this step changed before its claim
         * would have that change taken as written, and is refused.
         */
        void jobStartedByTheClaim() {
            if (!jobAsStored.equals(job.changeable())) {
                throw new IllegalStateException("Job " + job.id()
                        + " was changed by this step before its claim, whose statement writes only the start");
            }
            job.startedByStatement(now);
            jobAsStored = job.changeable();
        }

        public Attempt attempt() {
            return attempt;
        }

        public Job job() {
            return job;
        }

        public Instant now() {
            return now;
        }

        /** Keeps the attempt's stored patch, once this step stored or read it. */
        void keepStoredPatch(byte[] patch) {
            storedPatch = patch;
        }

        /** The attempt's stored patch, when this step stored or read it already. */
        Optional<byte[]> storedPatch() {
            return Optional.ofNullable(storedPatch);
        }

        /** Notes that this step recorded the attempt's usage as the provider reported it. */
        void keepReportedUsageStored() {
            reportedUsageStored = true;
        }

        /** Whether this step recorded the attempt's usage as the provider reported it. */
        boolean reportedUsageStored() {
            return reportedUsageStored;
        }

        /** Runs {@code action} once the step has committed (metrics: a rolled-back step counts nothing). */
        public void afterCommit(Runnable action) {
            afterCommit.add(action);
        }
    }

    /** The body of one step. */
    @FunctionalInterface
    public interface Step<T> {
        T run(Loaded loaded);
    }

    private static final String LOAD = "SELECT " + Attempt.columns("a") + ", " + Job.columns("j")
            + " FROM attempt a JOIN job j ON j.id = a.job_id WHERE a.id = ?";

    private final EntityManager em;
    private final SessionFactory sessions;
    private final PlainTransactions plainTransactions;
    private final CurrentTransaction transaction;
    private final Clock clock;

    AttemptSteps(
            EntityManager em,
            SessionFactory sessions,
            PlainTransactions plainTransactions,
            CurrentTransaction transaction,
            Clock clock) {
        this.em = em;
        this.sessions = sessions;
        this.plainTransactions = plainTransactions;
        this.transaction = transaction;
        this.clock = clock;
    }

    /**
     * Runs {@code step} in its own transaction: a plain one when the thread is in none and has no
     * request context ({@link CurrentTransaction#plainPossible}), again under JTA when it needed the
     * ORM, otherwise under JTA. Again on a write conflict, and again after a pause
     * while the database is away (a failover, a restart) for up to {@link #DATABASE_PATIENCE}, when
     * it went away before the commit began. A failure during the commit is thrown, never run again
     * here: the commit may have happened (a primary shut down while the commit waited for its
     * synchronous standby keeps it, and its client is told "terminating connection"), and what the
     * step planned after it (an apply on the target) would be lost to a rerun that finds its work
     * done. The caller's recovery (the message comes back, the sweep resumes a stalled apply) starts
     * from what is committed.
     *
     * @param whenMissing what the step returns when the attempt does not exist
     */
    public <T> T run(UUID attemptId, T whenMissing, Step<T> step) {
        long giveUpAt = System.nanoTime() + DATABASE_PATIENCE.toNanos();
        Duration pause = FIRST_PAUSE;
        boolean plain = transaction.plainPossible();
        for (int conflicts = 1; ; ) {
            List<Runnable> afterCommit = new ArrayList<>();
            AtomicBoolean committing = new AtomicBoolean();
            try {
                T result = plain
                        ? plainTransactions.inTransaction(
                                "Step on attempt " + attemptId,
                                connection -> once(attemptId, whenMissing, step, afterCommit, committing))
                        : QuarkusTransaction.requiringNew()
                                .call(() -> once(attemptId, whenMissing, step, afterCommit, committing));
                afterCommit.forEach(Runnable::run);
                return result;
            } catch (RuntimeException e) {
                if (plain && !committing.get() && CurrentTransaction.neededJta(e)) {
                    LOG.debugf(e, "Step on attempt %s needs the ORM (%s); running it again under JTA", attemptId, e);
                    plain = false;
                } else if (WriteConflict.isCause(e) && conflicts++ < RUNS) {
                    LOG.debugf("Step on attempt %s met a concurrent change; running it again", attemptId);
                } else if (!committing.get()
                        && DatabaseAway.isCause(e)
                        && System.nanoTime() + pause.toNanos() < giveUpAt) {
                    LOG.warnf(
                            "Step on attempt %s could not reach the database (%s); again in %d ms",
                            attemptId, e.toString(), pause.toMillis());
                    pauseFor(pause);
                    pause = pause.multipliedBy(2).compareTo(LONGEST_PAUSE) > 0 ? LONGEST_PAUSE : pause.multipliedBy(2);
                } else {
                    throw e;
                }
            }
        }
    }

    /** One run of the step, in the transaction {@link #run} began. */
    private <T> T once(
            UUID attemptId, T whenMissing, Step<T> step, List<Runnable> afterCommit, AtomicBoolean committing) {
        Loaded loaded = load(attemptId);
        if (loaded == null) {
            return whenMissing;
        }
        T value = step.run(loaded);
        if (!transaction.inPlain()) {
            // What the step created through the session, before the version-checked writes of the
            // two rows, inside the rerun loop (a conflict runs the step again).
            em.flush();
        }
        writeChanges(loaded);
        afterCommit.addAll(loaded.afterCommit);
        committing.set(true);
        return value;
    }

    private static void pauseFor(Duration pause) {
        try {
            Thread.sleep(pause.toMillis());
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while waiting for the database", interrupted);
        }
    }

    private Loaded load(UUID attemptId) {
        return transaction.onConnection(connection -> {
            try (PreparedStatement select = connection.prepareStatement(LOAD)) {
                select.setObject(1, attemptId);
                try (ResultSet row = select.executeQuery()) {
                    if (!row.next()) {
                        return null;
                    }
                    Attempt attempt = Attempt.read(row, 1);
                    Job job = Job.read(row, 1 + Attempt.COLUMN_COUNT);
                    return new Loaded(
                            transaction, attempt, attempt.changeable(), job, job.changeable(), clock.instant());
                }
            }
        });
    }

    /**
     * Writes the attempt and the job where the step changed them, each with its version checked and
     * raised: the write of a row that another transaction changed since the load fails, and the step
     * runs again. A write that changes the job's winner (the election, or the release of a winner
     * the target refused) goes through Hibernate's stateless {@code update} of the job entity's
     * {@code @Version}, the election's compare-and-swap (rule 6). Every other write is the same
     * compare-and-swap in one plain statement ({@link Attempt#writeBack}, {@link Job#writeBack}):
     * Hibernate's update was about 5 % of the worker's CPU a row, the statement about 1 %
     * (bench/ANALYSIS.md). On the connection of the step's transaction.
     */
    private void writeChanges(Loaded loaded) {
        Attempt attempt = loaded.attempt;
        if (!loaded.attemptAsLoaded.equals(attempt.changeable()) && !transaction.onConnection(attempt::writeBack)) {
            throw new OptimisticLockException("Attempt " + attempt.id() + " changed since this step loaded it");
        }
        Job job = loaded.job;
        Job.Changeable jobNow = job.changeable();
        if (loaded.jobAsStored.equals(jobNow)) {
            if (loaded.jobCheckedAtCommit) {
                loaded.lockJob();
            }
            return;
        }
        if (!Objects.equals(loaded.jobAsStored.winningAttemptId(), jobNow.winningAttemptId())) {
            elect(job);
        } else if (!transaction.onConnection(job::writeBack)) {
            throw new OptimisticLockException("Job " + job.id() + " changed since this step loaded it");
        }
    }

    /**
     * The job's write through Hibernate's stateless {@code update} and its {@code @Version}, on the
     * connection of the step's transaction: a plain one's is handed to a stateless session of its
     * own, a JTA one's the session shares.
     */
    private void elect(Job job) {
        if (transaction.inPlain()) {
            transaction.onConnection(connection -> {
                try (StatelessSession writer =
                        sessions.withStatelessOptions().connection(connection).openStatelessSession()) {
                    writer.update(job);
                }
                return null;
            });
            return;
        }
        try (StatelessSession writer =
                em.unwrap(Session.class).statelessWithOptions().connection().open()) {
            writer.update(job);
        }
    }
}
