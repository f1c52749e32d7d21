package dev.jobapi.api.service;

import dev.jobapi.api.deadletter.DeadLetters;
import dev.jobapi.common.audit.AuditTrail;
import dev.jobapi.common.database.WriteConflict;
import dev.jobapi.common.message.OutboxWritten;
import dev.jobapi.common.tracing.TraceParent;
import dev.jobapi.common.tracing.Tracing;
import io.quarkus.narayana.jta.QuarkusTransaction;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Event;
import jakarta.persistence.EntityManager;
import java.nio.charset.StandardCharsets;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.function.Supplier;
import org.hibernate.Session;
import org.jboss.logging.Logger;

/**
 * The dead letters for operators (docs/design.md, rule 13): rows the api's dead-letter mover made
 * from what the broker dead-lettered. Listing, counting and filtering are SQL over the table's
 * indexes, paged by id (keyset); nothing here touches the broker.
 *
 * <p>Replay and discard by ids walk them in batches of {@link #BATCH} in id order, each batch one transaction that settles its rows with a conditional update ({@code WHERE
 * settlement IS NULL}: two concurrent calls never settle a row twice; the rows locked in id order,
 * so two such calls wait for each other and never deadlock), writes the replays' outbox
 * rows (the relay publishes them, confirmed) and the audit record. The next batch starts after the
 * last id, so the cost is linear in the selection. A dry run walks the same batches and changes
 * nothing. A selection by filter is a bulk action (bulk.BulkActions), which settles its batches
 * through {@link #settleForBulk}.
 */
@ApplicationScoped
public class DeadLetterQueue {

    /** Rows one transaction of a bulk action settles. */
    public static final int BATCH = 500;

    /** Ids and rows a bulk action's answer names; its counts are complete. */
    public static final int ANSWER_IDS = 100;

    /** Runs of one batch's transaction before a conflict with a concurrent one is thrown to the caller. */
    private static final int BATCH_RUNS = 5;

    private static final Logger LOG = Logger.getLogger(DeadLetterQueue.class);

    /** Dead letters a dry run shows. */
    public static final int SAMPLE = 10;

    /** Which rows: their settlement ({@code pending} while nobody acted on them). */
    public enum State {
        PENDING,
        REPLAYED,
        SKIPPED,
        DISCARDED,
        ALL;

        public String wire() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** A filter over the rows; null fields do not filter. {@code since} inclusive, {@code until} exclusive. */
    public record Filter(String owner, String provider, String reason, Instant since, Instant until, State state) {
        public static final Filter PENDING = new Filter(null, null, null, null, null, State.PENDING);
    }

    /** A dead letter as an operator sees it. */
    public record DeadLetter(
            String id,
            UUID attemptId,
            UUID jobId,
            String ownerId,
            String provider,
            String body,
            String reason,
            String deathQueue,
            long deathCount,
            Long deliveryCount,
            Instant firstDeathAt,
            Instant lastDeathAt,
            Instant deadLetteredAt,
            String sourceQueue,
            String state,
            Instant settledAt,
            String settledBy,
            String settleReason) {}

    /** One page, oldest first, and how many rows the filter matches. */
    public record Page(List<DeadLetter> items, long total, String next) {}

    /**
     * What a bulk action did (or, for a dry run, would do). Replayed and skipped belong to a replay
     * (skipped: the attempt has nothing left to do, settled without a publish), discarded to a
     * discard; notReplayable counts messages that name no existing attempt, which a replay leaves
     * pending. The id lists and the sample are bounded; the counts are not.
     */
    public record BulkResult(
            boolean dryRun,
            int replayed,
            int skipped,
            int discarded,
            int notReplayable,
            List<String> replayedIds,
            List<String> skippedIds,
            List<String> discardedIds,
            List<DeadLetter> sample) {}

    private static final String COLUMNS = "d.id, d.attempt_id, d.job_id, d.owner_id, d.provider, d.body, d.reason,"
            + " d.death_queue, d.death_count, d.delivery_count, d.first_death_at, d.last_death_at, d.dead_lettered_at,"
            + " d.source_queue, d.settlement, d.settled_at, d.settled_by, d.settle_reason";

    private final EntityManager em;
    private final AuditTrail audit;
    private final Event<OutboxWritten> outboxWritten;
    private final Tracing tracing;
    private final Clock clock;

    DeadLetterQueue(
            EntityManager em, AuditTrail audit, Event<OutboxWritten> outboxWritten, Tracing tracing, Clock clock) {
        this.em = em;
        this.audit = audit;
        this.outboxWritten = outboxWritten;
        this.tracing = tracing;
        this.clock = clock;
    }

    /** Rows the filter matches with an id above {@code after}, oldest first, skipping {@code offset}. */
    public Page page(Filter filter, long after, int offset, int limit) {
        return QuarkusTransaction.requiringNew()
                .call(() -> work(connection -> {
                    Where where = where(filter, "d");
                    List<DeadLetter> items = new ArrayList<>();
                    try (PreparedStatement select =
                            connection.prepareStatement("SELECT " + COLUMNS + " FROM dead_letter d WHERE " + where.sql
                                    + " AND d.id > ? ORDER BY d.id LIMIT ? OFFSET ?")) {
                        int i = where.bind(select, 1);
                        select.setLong(i++, after);
                        select.setInt(i++, limit + 1);
                        select.setInt(i, offset);
                        try (ResultSet rows = select.executeQuery()) {
                            while (rows.next()) {
                                items.add(deadLetter(rows));
                            }
                        }
                    }
                    String next = null;
                    if (items.size() > limit) {
                        items.remove(limit);
                        next = items.get(limit - 1).id();
                    }
                    return new Page(items, count(connection, filter), next);
                }));
    }

    /** How many rows the filter matches. */
    public long count(Filter filter) {
        return QuarkusTransaction.requiringNew().call(() -> work(connection -> count(connection, filter)));
    }

    /** Dead letters not yet replayed, skipped or discarded (the metric and the alert). */
    public long depth() {
        return count(Filter.PENDING);
    }

    /**
     * Replays the selection: each pending row whose attempt still has work left is settled {@code
     * replayed} and announced again through the outbox; one whose attempt has nothing left to do is
     * settled {@code skipped}; one that names no attempt stays pending. Each batch and its audit
     * record commit together.
     */
    public BulkResult replay(List<Long> ids, boolean dryRun, String operator, String reason) {
        return walk(ids, dryRun, operator, reason, true);
    }

    /** Discards these rows while pending, with the operator's reason; audited like a replay. */
    public BulkResult discard(List<Long> ids, boolean dryRun, String operator, String reason) {
        return walk(ids, dryRun, operator, reason, false);
    }

    private record Candidate(long id, UUID attemptId, UUID jobId, Boolean nothingLeftToDo) {}

    private BulkResult walk(List<Long> ids, boolean dryRun, String operator, String reason, boolean replay) {
        Tally tally = new Tally(dryRun);
        long after = 0;
        TraceParent trace = tracing.current();
        while (true) {
            long from = after;
            Walked walked = walkOneBatch(() -> QuarkusTransaction.requiringNew()
                    .call(() -> work(connection -> {
                        List<Candidate> batch = batch(connection, ids, from);
                        if (batch.isEmpty()) {
                            return null;
                        }
                        long last = batch.get(batch.size() - 1).id();
                        if (dryRun) {
                            // Reads only: nothing to conflict with, so this batch never runs twice.
                            preview(connection, batch, tally, replay);
                            return new Walked(last, null, 0);
                        }
                        Settled settled = settle(connection, batch, replay, operator, reason, trace, "ids=" + ids);
                        return new Walked(last, settled, replay ? notReplayable(batch) : 0);
                    })));
            if (walked == null) {
                break;
            }
            // Counted only once the batch committed: a batch run again after a conflict counts once.
            if (walked.settled() != null) {
                tally.notReplayable += walked.notReplayable();
                walked.settled().replayed().forEach(tally::replayed);
                walked.settled().skipped().forEach(tally::skipped);
                walked.settled().discarded().forEach(tally::discarded);
            }
            after = walked.last();
        }
        return tally.result();
    }

    /** One batch's outcome: the last id it looked at and, unless a dry run, what it settled. */
    private record Walked(long last, Settled settled, int notReplayable) {}

    /**
     * Runs one batch's transaction, again when it lost to a concurrent one (a deadlock PostgreSQL
     * broke on this side, a serialization failure): the batch settles only rows still pending, so
     * running it again settles what the other left.
     */
    private static Walked walkOneBatch(Supplier<Walked> batch) {
        for (int run = 1; ; run++) {
            try {
                return batch.get();
            } catch (RuntimeException e) {
                if (!WriteConflict.isCause(e) || run == BATCH_RUNS) {
                    throw e;
                }
                LOG.debugf("A dead-letter batch met a concurrent change; running it again (%s)", e.toString());
            }
        }
    }

    private List<Candidate> batch(Connection connection, List<Long> ids, long after) throws SQLException {
        Where where = new Where("d.settlement IS NULL AND d.id = ANY(?)", List.of(ids));
        List<Candidate> batch = new ArrayList<>();
        try (PreparedStatement select =
                connection.prepareStatement("SELECT d.id, a.id, a.job_id, a.state, j.state FROM dead_letter d"
                        + " LEFT JOIN attempt a ON a.id = d.attempt_id LEFT JOIN job j ON j.id = a.job_id"
                        + " WHERE " + where.sql + " AND d.id > ? ORDER BY d.id LIMIT ?")) {
            int i = where.bind(select, 1);
            select.setLong(i++, after);
            select.setInt(i, BATCH);
            try (ResultSet rows = select.executeQuery()) {
                while (rows.next()) {
                    UUID attemptId = rows.getObject(2, UUID.class);
                    batch.add(new Candidate(
                            rows.getLong(1),
                            attemptId,
                            rows.getObject(3, UUID.class),
                            attemptId == null
                                    ? null
                                    : DeadLetters.nothingLeftToDo(rows.getString(4), rows.getString(5))));
                }
            }
        }
        return batch;
    }

    private void preview(Connection connection, List<Candidate> batch, Tally tally, boolean replay)
            throws SQLException {
        List<Long> affected = new ArrayList<>();
        for (Candidate c : batch) {
            if (!replay) {
                tally.discarded(c.id());
                affected.add(c.id());
            } else if (c.nothingLeftToDo() == null) {
                tally.notReplayable++;
            } else {
                affected.add(c.id());
                if (c.nothingLeftToDo()) {
                    tally.skipped(c.id());
                } else {
                    tally.replayed(c.id());
                }
            }
        }
        int room = SAMPLE - tally.sample.size();
        if (room > 0 && !affected.isEmpty()) {
            try (PreparedStatement select = connection.prepareStatement(
                    "SELECT " + COLUMNS + " FROM dead_letter d WHERE d.id = ANY(?) ORDER BY d.id LIMIT ?")) {
                select.setArray(1, connection.createArrayOf("bigint", affected.toArray()));
                select.setInt(2, room);
                try (ResultSet rows = select.executeQuery()) {
                    while (rows.next()) {
                        tally.sample.add(deadLetter(rows));
                    }
                }
            }
        }
    }

    /** Which of a batch's dead letters this call settled, and how; a row settled by another call is in none. */
    public record Settled(List<Long> replayed, List<Long> skipped, List<Long> discarded) {}

    /**
     * Settles these dead letters for a bulk action (bulk.BulkActions), on the caller's connection and
     * in its transaction, with the same checks and audit record as a replay or discard by ids: a row
     * no longer pending is left alone; a replay skips a row whose attempt has nothing left to do, and
     * leaves one that names no attempt pending.
     *
     * @param describe what the audit record names as the selection (the bulk action)
     */
    public Settled settleForBulk(
            Connection connection, List<Long> ids, boolean replay, String operator, String reason, String describe)
            throws SQLException {
        List<Candidate> batch = batch(connection, ids, 0);
        return settle(connection, batch, replay, operator, reason, tracing.current(), describe);
    }

    private static int notReplayable(List<Candidate> batch) {
        return (int) batch.stream().filter(c -> c.nothingLeftToDo() == null).count();
    }

    private Settled settle(
            Connection connection,
            List<Candidate> batch,
            boolean replay,
            String operator,
            String reason,
            TraceParent trace,
            String describe)
            throws SQLException {
        return replay
                ? settleReplay(connection, batch, operator, reason, trace, describe)
                : settleDiscard(connection, batch, operator, reason, describe);
    }

    private Settled settleReplay(
            Connection connection,
            List<Candidate> batch,
            String operator,
            String reason,
            TraceParent trace,
            String describe)
            throws SQLException {
        List<Long> replay = new ArrayList<>();
        List<Long> skip = new ArrayList<>();
        for (Candidate c : batch) {
            if (c.nothingLeftToDo() == null) {
                continue;
            } else if (c.nothingLeftToDo()) {
                skip.add(c.id());
            } else {
                replay.add(c.id());
            }
        }
        List<Long> replayed = settle(connection, replay, "replayed", operator, reason);
        List<Long> skipped = settle(connection, skip, "skipped", operator, reason);
        if (!replayed.isEmpty()) {
            // The relay publishes these after the commit, confirmed; the row that was replayed and the
            // message that replays it commit together or not at all.
            try (PreparedStatement insert = connection.prepareStatement(
                    "INSERT INTO outbox (attempt_id, job_id, created_at, traceparent, tracestate)"
                            + " SELECT a.id, a.job_id, ?, ?, ? FROM dead_letter d JOIN attempt a ON a.id = d.attempt_id"
                            + " WHERE d.id = ANY(?) ORDER BY d.id")) {
                insert.setTimestamp(1, Timestamp.from(clock.instant()));
                insert.setString(2, trace.traceparent());
                insert.setString(3, trace.tracestate());
                insert.setArray(4, connection.createArrayOf("bigint", replayed.toArray()));
                insert.executeUpdate();
            }
            outboxWritten.fire(new OutboxWritten());
        }
        if (!replayed.isEmpty() || !skipped.isEmpty()) {
            Candidate only = batch.size() == 1 ? batch.get(0) : null;
            audit.record(
                    operator,
                    "dlq.replay",
                    reason == null ? describe : reason,
                    only == null ? null : only.jobId(),
                    only == null ? null : only.attemptId(),
                    "selection: " + describe + "; replayed=" + replayed + " skipped(nothing left to do)=" + skipped);
        }
        return new Settled(replayed, skipped, List.of());
    }

    private Settled settleDiscard(
            Connection connection, List<Candidate> batch, String operator, String reason, String describe)
            throws SQLException {
        List<Long> ids = batch.stream().map(Candidate::id).toList();
        List<Long> discarded = settle(connection, ids, "discarded", operator, reason);
        if (!discarded.isEmpty()) {
            Candidate only = batch.size() == 1 ? batch.get(0) : null;
            audit.record(
                    operator,
                    "dlq.discard",
                    reason,
                    only == null ? null : only.jobId(),
                    only == null ? null : only.attemptId(),
                    "selection: " + describe + "; discarded=" + discarded);
        }
        return new Settled(List.of(), List.of(), discarded);
    }

    /**
     * Settles the rows still pending and returns which: a row another call settled first (it waited
     * for that call's commit, then found the row no longer pending) is not returned.
     */
    private List<Long> settle(Connection connection, List<Long> ids, String settlement, String operator, String reason)
            throws SQLException {
        List<Long> settled = new ArrayList<>();
        if (ids.isEmpty()) {
            return settled;
        }
        // Locks in id order before updating: two calls settling overlapping rows then wait for each
        // other instead of each holding a row the other needs (an UPDATE by an id list locks in
        // whatever order its plan visits the rows, and two connections' plans may differ).
        try (PreparedStatement update = connection.prepareStatement(
                "UPDATE dead_letter d SET settlement = ?, settled_at = ?, settled_by = ?, settle_reason = ?"
                        + " FROM (SELECT id FROM dead_letter WHERE id = ANY(?) AND settlement IS NULL"
                        + " ORDER BY id FOR UPDATE) locked"
                        + " WHERE d.id = locked.id AND d.settlement IS NULL RETURNING d.id")) {
            update.setString(1, settlement);
            update.setTimestamp(2, Timestamp.from(clock.instant()));
            update.setString(3, operator);
            update.setString(4, reason);
            update.setArray(5, connection.createArrayOf("bigint", ids.toArray()));
            try (ResultSet rows = update.executeQuery()) {
                while (rows.next()) {
                    settled.add(rows.getLong(1));
                }
            }
        }
        settled.sort(null);
        return settled;
    }

    private final class Tally {
        final boolean dryRun;
        int replayed;
        int skipped;
        int discarded;
        int notReplayable;
        final List<String> replayedIds = new ArrayList<>();
        final List<String> skippedIds = new ArrayList<>();
        final List<String> discardedIds = new ArrayList<>();
        final List<DeadLetter> sample = new ArrayList<>();

        Tally(boolean dryRun) {
            this.dryRun = dryRun;
        }

        void replayed(long id) {
            replayed++;
            bounded(replayedIds, id);
        }

        void skipped(long id) {
            skipped++;
            bounded(skippedIds, id);
        }

        void discarded(long id) {
            discarded++;
            bounded(discardedIds, id);
        }

        private void bounded(List<String> ids, long id) {
            if (ids.size() < ANSWER_IDS) {
                ids.add(Long.toString(id));
            }
        }

        BulkResult result() {
            return new BulkResult(
                    dryRun, replayed, skipped, discarded, notReplayable, replayedIds, skippedIds, discardedIds, sample);
        }
    }

    private long count(Connection connection, Filter filter) throws SQLException {
        Where where = where(filter, "d");
        try (PreparedStatement select =
                connection.prepareStatement("SELECT count(*) FROM dead_letter d WHERE " + where.sql)) {
            where.bind(select, 1);
            try (ResultSet rows = select.executeQuery()) {
                rows.next();
                return rows.getLong(1);
            }
        }
    }

    /** A WHERE clause and its parameters, in order. */
    private record Where(String sql, List<Object> parameters) {
        int bind(PreparedStatement statement, int first) throws SQLException {
            int i = first;
            for (Object p : parameters) {
                if (p instanceof List<?> ids) {
                    Array array = statement.getConnection().createArrayOf("bigint", ids.toArray());
                    statement.setArray(i++, array);
                } else if (p instanceof Instant at) {
                    statement.setTimestamp(i++, Timestamp.from(at));
                } else {
                    statement.setObject(i++, p);
                }
            }
            return i;
        }
    }

    private static Where where(Filter filter, String d) {
        List<String> clauses = new ArrayList<>();
        List<Object> parameters = new ArrayList<>();
        switch (filter.state()) {
            case PENDING -> clauses.add(d + ".settlement IS NULL");
            case ALL -> clauses.add("true");
            default -> {
                clauses.add(d + ".settlement = ?");
                parameters.add(filter.state().wire());
            }
        }
        if (filter.owner() != null) {
            clauses.add(d + ".owner_id = ?");
            parameters.add(filter.owner());
        }
        if (filter.provider() != null) {
            clauses.add(d + ".provider = ?");
            parameters.add(filter.provider());
        }
        if (filter.reason() != null) {
            clauses.add(d + ".reason = ?");
            parameters.add(filter.reason());
        }
        if (filter.since() != null) {
            clauses.add(d + ".dead_lettered_at >= ?");
            parameters.add(filter.since());
        }
        if (filter.until() != null) {
            clauses.add(d + ".dead_lettered_at < ?");
            parameters.add(filter.until());
        }
        return new Where(String.join(" AND ", clauses), parameters);
    }

    private static DeadLetter deadLetter(ResultSet rows) throws SQLException {
        String settlement = rows.getString(15);
        return new DeadLetter(
                Long.toString(rows.getLong(1)),
                rows.getObject(2, UUID.class),
                rows.getObject(3, UUID.class),
                rows.getString(4),
                rows.getString(5),
                new String(rows.getBytes(6), StandardCharsets.UTF_8),
                rows.getString(7),
                rows.getString(8),
                rows.getLong(9),
                (Long) rows.getObject(10, Long.class),
                instant(rows.getTimestamp(11)),
                instant(rows.getTimestamp(12)),
                instant(rows.getTimestamp(13)),
                rows.getString(14),
                settlement == null ? "pending" : settlement,
                instant(rows.getTimestamp(16)),
                rows.getString(17),
                rows.getString(18));
    }

    private static Instant instant(Timestamp timestamp) {
        return timestamp == null ? null : timestamp.toInstant();
    }

    @FunctionalInterface
    private interface Work<T> {
        T run(Connection connection) throws SQLException;
    }

    /** Plain JDBC on the transaction's connection: arrays and RETURNING without the query machinery. */
    private <T> T work(Work<T> work) {
        return em.unwrap(Session.class).doReturningWork(work::run);
    }
}
