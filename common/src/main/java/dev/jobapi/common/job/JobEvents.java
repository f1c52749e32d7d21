package dev.jobapi.common.job;

import dev.jobapi.common.database.CurrentTransaction;
import dev.jobapi.common.message.JobChangeNotices;
import dev.jobapi.common.text.StoredText;
import jakarta.inject.Singleton;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * Appends to a job's timeline in the caller's transaction, plain or JTA ({@link CurrentTransaction}),
 * so an event exists exactly when the change it describes committed.
 *
 * <p>The events of one transaction are written together, in one statement just before it commits
 * ({@link CurrentTransaction#beforeCommit}), not one statement each as they happen: a worker's
 * delivery records several events, and a native query each cost it a quarter of its CPU
 * (bench/ANALYSIS.md). A transaction that rolls back writes none.
 *
 * <p>Each transaction that writes also hands its jobs to the job change notices once it has
 * committed, so a stream on any api process wakes. By a hook of its own on the transaction: a CDI
 * event observed after the commit cost the worker 5.5 % of its CPU (now 0.7 %) (ArC's notification,
 * its request context, its own synchronization; bench/ANALYSIS.md).
 */
@Singleton
public class JobEvents {

    /** A job's timeline lists at most one replay of the job, and one per attempt, in this window. */
    public static final Duration REPLAY_WINDOW = Duration.ofMinutes(1);

    /**
     * A transaction's events in one statement, from one array a column, in the order recorded: the
     * sequence numbers them in the order the rows are inserted, and the timeline lists them by it.
     * One statement, not a JDBC batch of one each: the table's statement trigger (the webhook
     * deliveries, V27) then runs once a transaction, not once an event. The arrays go as text, which
     * pgjdbc binds from a {@code String[]} directly ({@code createArrayOf} and {@code setArray} cost
     * the worker more than the statements saved); the select casts them. Each row's owner is read from
     * its job's row here (V32), which costs less than the owner trigger's call per row. A subquery per
     * row, not a join, which the planner may make a scan of the whole job table (it guesses the arrays'
     * length): in the bench a join touched 227 buffers a call, the trigger 44 (bench/ANALYSIS.md). A job that
     * does not exist leaves the owner null, and the trigger then refuses the row.
     *
     * <p>Each array is a sub-select's value, not the parameter itself, so that PostgreSQL plans the
     * statement once a connection: given the arrays, it counted their elements and found a plan for
     * one to four rows cheaper than its generic plan for ten, and so planned every execution anew
     * (planning 0.055 ms against 0.008 with the generic plan, for 0.08 ms of execution).
     */
    private static final String INSERT = "INSERT INTO job_event (job_id, owner_id, attempt_id, at, kind, detail)"
            + " SELECT job_id::uuid, (SELECT owner_id FROM job WHERE id = recorded.job_id::uuid), attempt_id::uuid,"
            + " at::timestamptz, kind, detail"
            + " FROM unnest((SELECT ?::text[]), (SELECT ?::text[]), (SELECT ?::text[]), (SELECT ?::text[]),"
            + " (SELECT ?::text[]))"
            + " WITH ORDINALITY AS recorded (job_id, attempt_id, at, kind, detail, n) ORDER BY n";

    private final EntityManager em;
    private final CurrentTransaction transaction;
    private final Clock clock;
    private final JobChangeNotices notices;

    JobEvents(EntityManager em, CurrentTransaction transaction, Clock clock, JobChangeNotices notices) {
        this.em = em;
        this.transaction = transaction;
        this.clock = clock;
        this.notices = notices;
    }

    /** One entry of a job's timeline; {@code attemptId} is null for an event of the job as a whole. */
    public record Event(UUID attemptId, JobEventKind kind, String detail) {}

    /** An event as it will be written: its job and the time it was recorded. */
    private record Pending(UUID jobId, Event event, Instant at) {}

    /** What one transaction has recorded and not yet written, and the jobs it touched. */
    private record ThisTransaction(List<Pending> events, Set<UUID> jobIds) {}

    /** Appends the event when the transaction commits; refused outside any transaction. */
    public Recorded record(UUID jobId, UUID attemptId, JobEventKind kind, String detail) {
        List<Pending> pending = append(jobId, List.of(new Event(attemptId, kind, detail)));
        return new Recorded(pending, pending.size() - 1);
    }

    /** An event this transaction recorded and has not written yet. */
    public static final class Recorded {
        private final List<Pending> events;
        private final int index;

        private Recorded(List<Pending> events, int index) {
            this.events = events;
            this.index = index;
        }

        /**
         * Writes {@code kind} and {@code detail} in this event's place instead: for a row that a later
         * row of the same transaction would only repeat.
         */
        public void replaceWith(JobEventKind kind, String detail) {
            Pending replaced = events.get(index);
            events.set(
                    index,
                    new Pending(
                            replaced.jobId(), new Event(replaced.event().attemptId(), kind, detail), replaced.at()));
        }
    }

    /**
     * Appends the event unless the job's newest event of this kind (for this attempt) is younger
     * than {@code window}: for what a client can repeat at will, replays, so a retry loop leaves a
     * bounded trace on the timeline (the replay counters still count every one). Written at once:
     * the check reads the table.
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public void recordAtMostOncePer(Duration window, UUID jobId, UUID attemptId, JobEventKind kind, String detail) {
        Instant now = clock.instant();
        em.createNativeQuery("INSERT INTO job_event (job_id, attempt_id, at, kind, detail)"
                        + " SELECT ?1, ?2, ?3, ?4, ?5 WHERE NOT EXISTS (SELECT 1 FROM job_event WHERE job_id = ?1"
                        + " AND attempt_id IS NOT DISTINCT FROM ?2 AND kind = ?4 AND at > ?6)")
                .setParameter(1, jobId)
                .setParameter(2, attemptId)
                .setParameter(3, now)
                .setParameter(4, kind.wireName())
                .setParameter(5, StoredText.of(detail))
                .setParameter(6, now.minus(window))
                .executeUpdate();
        Set<UUID> changed = Set.of(jobId);
        transaction.afterCommit(() -> notices.changed(changed));
    }

    /** Appends the events in order, when the transaction commits; refused outside any transaction. */
    public void record(UUID jobId, List<Event> events) {
        append(jobId, events);
    }

    /** Adds the events to this transaction's unwritten ones; returns all of them, these last. */
    private List<Pending> append(UUID jobId, List<Event> events) {
        Instant now = clock.instant();
        ThisTransaction pending = pendingOfThisTransaction();
        events.forEach(event -> pending.events().add(new Pending(jobId, event, now)));
        pending.jobIds().add(jobId);
        return pending.events();
    }

    /**
     * This transaction's unwritten events; the first call registers their write before the commit
     * and hands the transaction's jobs to the notices after it (the set fills up until the commit,
     * when it is read).
     */
    private ThisTransaction pendingOfThisTransaction() {
        ThisTransaction pending = (ThisTransaction) transaction.resource(JobEvents.class);
        if (pending == null) {
            ThisTransaction created = new ThisTransaction(new ArrayList<>(), new HashSet<>());
            transaction.putResource(JobEvents.class, created);
            transaction.beforeCommit(connection -> insert(connection, created.events()));
            transaction.afterCommit(() -> notices.changed(created.jobIds()));
            pending = created;
        }
        return pending;
    }

    private static int insert(Connection connection, List<Pending> events) throws SQLException {
        int count = events.size();
        String[] jobIds = new String[count];
        String[] attemptIds = new String[count];
        String[] ats = new String[count]; // ISO 8601, which timestamptz reads whatever the DateStyle
        String[] kinds = new String[count];
        String[] details = new String[count];
        for (int i = 0; i < count; i++) {
            Pending event = events.get(i);
            UUID attemptId = event.event().attemptId();
            jobIds[i] = event.jobId().toString();
            attemptIds[i] = attemptId == null ? null : attemptId.toString();
            ats[i] = event.at().toString();
            kinds[i] = event.event().kind().wireName();
            details[i] = StoredText.of(event.event().detail());
        }
        try (PreparedStatement insert = connection.prepareStatement(INSERT)) {
            insert.setObject(1, jobIds);
            insert.setObject(2, attemptIds);
            insert.setObject(3, ats);
            insert.setObject(4, kinds);
            insert.setObject(5, details);
            return insert.executeUpdate();
        }
    }
}
