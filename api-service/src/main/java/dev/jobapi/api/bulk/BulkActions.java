package dev.jobapi.api.bulk;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jobapi.api.config.JobApiConfig;
import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.security.Caller;
import dev.jobapi.api.service.ApiMetrics;
import dev.jobapi.api.service.AttemptRequests;
import dev.jobapi.api.service.DeadLetterQueue;
import dev.jobapi.api.service.JobCancellation;
import dev.jobapi.api.service.Quarantine;
import dev.jobapi.api.service.Replayable;
import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.audit.AuditTrail;
import dev.jobapi.common.digest.Sha256;
import io.quarkus.narayana.jta.QuarkusTransaction;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.hibernate.Session;

/**
 * Bulk actions by filter (docs/design.md, "Bulk actions"). A dry run counts and samples what the
 * filter matches for the action and signs the count and a fingerprint of the set (an MD5 over its
 * ids in processing order) into a token. The execution presents the token: in one transaction it
 * freezes the set as items of a bulk_action row, compares count and fingerprint with the token and
 * refuses (409 {@code bulk-set-changed}) when they differ, and audits the start. The items are then
 * processed in batches, by the request itself when the set fits one batch, else by the runner in
 * the background; each item goes through the single action's own service (the same ledger check,
 * state machine and kill switch) and its outcome, its change and its audit record commit together.
 * A batch holds the bulk action's row lock, so two replicas never process one bulk action at once;
 * after a crash the next round continues with the items that have no outcome.
 */
@ApplicationScoped
public class BulkActions {

    /** Items a dry run shows. */
    public static final int SAMPLE = 10;

    /** Jobs or attempts one batch processes, each in a transaction of its own. */
    public static final int JOB_BATCH = 100;

    /** Refused items a progress report names; its counts are complete. */
    public static final int REFUSALS_SHOWN = 20;

    /** One candidate as a dry run shows it. */
    public record Item(String id, UUID jobId, String owner, String provider, String state, String reason, Instant at) {}

    /** What a dry run found, and the token an execution of exactly this must present. */
    public record DryRun(
            String action,
            Map<String, String> filter,
            long count,
            List<Item> sample,
            String token,
            Instant expiresAt) {}

    /** An item the single action's check refused, and why. */
    public record Refusal(String target, String detail) {}

    /** A bulk action's progress: {@code processed} of {@code total} items have their outcome. */
    public record Progress(
            String id,
            String action,
            Map<String, String> filter,
            String reason,
            String requestedBy,
            String state,
            int total,
            int processed,
            int done,
            int skipped,
            int refused,
            List<Refusal> refusals,
            Instant createdAt,
            Instant finishedAt) {}

    private final EntityManager em;
    private final BulkTokens tokens;
    private final DeadLetterQueue deadLetters;
    private final JobCancellation cancellation;
    private final AttemptRequests attemptRequests;
    private final Quarantine quarantine;
    private final AuditTrail audit;
    private final ApiMetrics metrics;
    private final ObjectMapper json;
    private final JobApiConfig.Bulk config;
    private final Clock clock;

    BulkActions(
            EntityManager em,
            BulkTokens tokens,
            DeadLetterQueue deadLetters,
            JobCancellation cancellation,
            AttemptRequests attemptRequests,
            Quarantine quarantine,
            AuditTrail audit,
            ApiMetrics metrics,
            ObjectMapper json,
            JobApiConfig config,
            Clock clock) {
        this.em = em;
        this.tokens = tokens;
        this.deadLetters = deadLetters;
        this.cancellation = cancellation;
        this.attemptRequests = attemptRequests;
        this.quarantine = quarantine;
        this.audit = audit;
        this.metrics = metrics;
        this.json = json;
        this.config = config.bulk();
        this.clock = clock;
    }

    /** Counts and samples what the action would act on; changes nothing. */
    public DryRun dryRun(BulkAction action, BulkFilter filter) {
        BulkAction.Sql targets = action.targets(filter);
        return QuarkusTransaction.requiringNew()
                .call(() -> work(connection -> {
                    long count;
                    String fingerprint;
                    try (PreparedStatement select = connection.prepareStatement(
                            "SELECT count(*), coalesce(md5(string_agg(t.target, ',' ORDER BY t.seq)), '') FROM ("
                                    + targets.text() + ") t")) {
                        targets.bind(select, 1);
                        try (ResultSet row = select.executeQuery()) {
                            row.next();
                            count = row.getLong(1);
                            fingerprint = row.getString(2);
                        }
                    }
                    List<Item> sample = new ArrayList<>();
                    try (PreparedStatement select = connection.prepareStatement(
                            "SELECT t.target, t.job_id, t.owner_id, t.provider, t.state, t.reason, t.at FROM ("
                                    + targets.text() + ") t ORDER BY t.seq LIMIT " + SAMPLE)) {
                        targets.bind(select, 1);
                        try (ResultSet rows = select.executeQuery()) {
                            while (rows.next()) {
                                Timestamp at = rows.getTimestamp(7);
                                sample.add(new Item(
                                        rows.getString(1),
                                        rows.getObject(2, UUID.class),
                                        rows.getString(3),
                                        rows.getString(4),
                                        rows.getString(5),
                                        rows.getString(6),
                                        at == null ? null : at.toInstant()));
                            }
                        }
                    }
                    Instant expiresAt = clock.instant().plus(config.tokenTtl());
                    String token = tokens.sign(
                            new BulkTokens.Claims(action.wire(), filter.canonical(), count, fingerprint, expiresAt));
                    return new DryRun(action.wire(), filter.canonical(), count, sample, token, expiresAt);
                }));
    }

    /**
     * Starts the action on the set the dry run counted: the token must be the dry run's of this action
     * and filter (else 400), unexpired and for a set that has not changed since (else 409
     * {@code bulk-set-changed}). Returns the bulk action's id; its items are not processed yet.
     */
    public long start(BulkAction action, BulkFilter filter, String token, String reason, String operator) {
        BulkTokens.Claims claims = tokens.verify(token);
        if (!claims.action().equals(action.wire()) || !claims.filter().equals(filter.canonical())) {
            throw new ProblemException(
                    Problem.INVALID_REQUEST,
                    "'token' is the dry run's of " + claims.action() + " " + claims.filter()
                            + ", not of this action and filter.");
        }
        Instant now = clock.instant();
        if (now.isAfter(claims.expiresAt())) {
            throw new ProblemException(
                    Problem.BULK_SET_CHANGED,
                    "The dry run's token expired at " + claims.expiresAt() + "; run the dry run again.",
                    Map.of("expected", claims.count()));
        }
        BulkAction.Sql targets = action.targets(filter);
        return QuarkusTransaction.requiringNew()
                .call(() -> work(connection -> {
                    long id;
                    try (PreparedStatement insert = connection.prepareStatement(
                            "INSERT INTO bulk_action (action, filter, reason, requested_by, total, created_at)"
                                    + " VALUES (?, ?::jsonb, ?, ?, 0, ?) RETURNING id")) {
                        insert.setString(1, action.wire());
                        insert.setString(2, json.writeValueAsString(filter.canonical()));
                        insert.setString(3, reason);
                        insert.setString(4, operator);
                        insert.setTimestamp(5, Timestamp.from(now));
                        try (ResultSet row = insert.executeQuery()) {
                            row.next();
                            id = row.getLong(1);
                        }
                    } catch (JsonProcessingException e) {
                        throw new IllegalStateException("a filter of strings always serialises", e);
                    }
                    try (PreparedStatement freeze = connection.prepareStatement(
                            "INSERT INTO bulk_action_item (bulk_action_id, seq, target) SELECT ?, t.seq, t.target FROM ("
                                    + targets.text() + ") t")) {
                        freeze.setLong(1, id);
                        targets.bind(freeze, 2);
                        freeze.executeUpdate();
                    }
                    long count;
                    String fingerprint;
                    try (PreparedStatement select = connection.prepareStatement(
                            "SELECT count(*), coalesce(md5(string_agg(target, ',' ORDER BY seq)), '') FROM bulk_action_item"
                                    + " WHERE bulk_action_id = ?")) {
                        select.setLong(1, id);
                        try (ResultSet row = select.executeQuery()) {
                            row.next();
                            count = row.getLong(1);
                            fingerprint = row.getString(2);
                        }
                    }
                    if (count != claims.count() || !fingerprint.equals(claims.fingerprint())) {
                        // Thrown inside the transaction: the bulk action and its items roll back with it.
                        throw new ProblemException(
                                Problem.BULK_SET_CHANGED,
                                "The dry run counted " + claims.count() + "; the filter now matches " + count
                                        + (count == claims.count() ? " different ones" : "")
                                        + ". Run the dry run again and check its count.",
                                Map.of("expected", claims.count(), "actual", count));
                    }
                    try (PreparedStatement update =
                            connection.prepareStatement("UPDATE bulk_action SET total = ? WHERE id = ?")) {
                        update.setLong(1, count);
                        update.setLong(2, id);
                        update.executeUpdate();
                    }
                    audit.record(
                            operator,
                            "bulk." + action.wire(),
                            reason,
                            null,
                            null,
                            "bulk action " + id + "; filter " + filter.canonical() + "; count " + count);
                    return id;
                }));
    }

    /**
     * Whether the execution's request processes the set itself: dead letters of one batch (one
     * transaction, as quick as a replay by ids). Everything else runs in the background, where a
     * job's single action, one transaction each, takes what it takes without holding a request.
     */
    public static boolean runsInTheRequest(BulkAction action, int total) {
        return action.kind() == BulkAction.Kind.DEAD_LETTER && total <= DeadLetterQueue.BATCH;
    }

    /**
     * Processes batches until every item has its outcome; where the runner holds the action, waits for
     * its batch to commit and goes on after it. The request of a small set calls this.
     */
    public void runToEnd(long id) {
        while (step(id, true)) {
            // Each step is one batch, committed.
        }
    }

    /**
     * Processes one batch of the bulk action: true when it processed one and more may remain; false
     * when the action is done (marked so now, if this call found nothing left) or another replica
     * is processing it. A batch of dead letters is one transaction; a batch of jobs or attempts is
     * one transaction per item.
     */
    public boolean step(long id) {
        return step(id, false);
    }

    private boolean step(long id, boolean wait) {
        if (kindOf(id) == BulkAction.Kind.DEAD_LETTER) {
            return QuarkusTransaction.requiringNew()
                    .call(() -> work(connection -> {
                        Claimed claimed = claim(connection, id, DeadLetterQueue.BATCH, wait);
                        if (claimed == null || claimed.seqs().isEmpty()) {
                            return false;
                        }
                        settleDeadLetters(connection, id, claimed);
                        return true;
                    }));
        }
        for (int i = 0; i < JOB_BATCH; i++) {
            if (!processNext(id, wait)) {
                return false;
            }
        }
        return true;
    }

    /** A bulk action's running header and its next items, under the lock of its row. */
    private record Claimed(
            BulkAction action, String reason, String operator, List<Integer> seqs, List<String> targets) {}

    private BulkAction.Kind kindOf(long id) {
        return QuarkusTransaction.requiringNew().call(() -> BulkAction.ofWire(
                        (String) em.createNativeQuery("SELECT action FROM bulk_action WHERE id = ?1")
                                .setParameter(1, id)
                                .getSingleResult())
                .kind());
    }

    /**
     * Locks the running bulk action's row and loads its next items without an outcome; marks it done,
     * returning no items, when none is left; null when it is not running or (unless {@code wait})
     * another replica holds it ({@code SKIP LOCKED}). The lock is what keeps two replicas off one item.
     */
    private Claimed claim(Connection connection, long id, int limit, boolean wait) throws SQLException {
        BulkAction action;
        String reason;
        String operator;
        try (PreparedStatement lock = connection.prepareStatement("SELECT action, reason, requested_by"
                + " FROM bulk_action WHERE id = ? AND finished_at IS NULL FOR UPDATE" + (wait ? "" : " SKIP LOCKED"))) {
            lock.setLong(1, id);
            try (ResultSet row = lock.executeQuery()) {
                if (!row.next()) {
                    return null;
                }
                action = BulkAction.ofWire(row.getString(1));
                reason = row.getString(2);
                operator = row.getString(3);
            }
        }
        List<Integer> seqs = new ArrayList<>();
        List<String> targets = new ArrayList<>();
        try (PreparedStatement select = connection.prepareStatement("SELECT seq, target FROM bulk_action_item"
                + " WHERE bulk_action_id = ? AND outcome IS NULL ORDER BY seq LIMIT ?")) {
            select.setLong(1, id);
            select.setInt(2, limit);
            try (ResultSet rows = select.executeQuery()) {
                while (rows.next()) {
                    seqs.add(rows.getInt(1));
                    targets.add(rows.getString(2));
                }
            }
        }
        if (seqs.isEmpty()) {
            try (PreparedStatement done =
                    connection.prepareStatement("UPDATE bulk_action SET finished_at = ? WHERE id = ?")) {
                done.setTimestamp(1, Timestamp.from(clock.instant()));
                done.setLong(2, id);
                done.executeUpdate();
            }
        }
        return new Claimed(action, reason, operator, seqs, targets);
    }

    /**
     * The next job or attempt, in a transaction of its own: the single action, its audit record and
     * the item's outcome commit together. A refusal of the single action rolls that transaction back
     * and is recorded as the item's outcome, with the problem's detail, in the next. False when
     * nothing is left or another replica holds the action.
     */
    private boolean processNext(long id, boolean wait) {
        Claimed[] held = new Claimed[1];
        try {
            return QuarkusTransaction.requiringNew().call(() -> {
                Claimed claimed = work(connection -> claim(connection, id, 1, wait));
                if (claimed == null || claimed.seqs().isEmpty()) {
                    return false;
                }
                held[0] = claimed;
                Caller caller = new Caller(claimed.operator(), Set.of(Caller.OPERATOR));
                String[] outcome = act(
                        claimed.action(),
                        UUID.fromString(claimed.targets().get(0)),
                        caller,
                        claimed.reason(),
                        "bulk action " + id,
                        id);
                outcome(id, claimed.seqs().get(0), outcome[0], outcome[1]);
                return true;
            });
        } catch (ProblemException refused) {
            QuarkusTransaction.requiringNew()
                    .run(() -> outcome(id, held[0].seqs().get(0), "refused", refused.getMessage()));
            return true;
        }
    }

    /** One batch of dead letters, settled with their items' outcomes in the batch's transaction. */
    private void settleDeadLetters(Connection connection, long id, Claimed claimed) throws SQLException {
        List<Integer> seqs = claimed.seqs();
        List<Long> ids = claimed.targets().stream().map(Long::valueOf).toList();
        DeadLetterQueue.Settled settled = deadLetters.settleForBulk(
                connection,
                ids,
                claimed.action() == BulkAction.DLQ_REPLAY,
                claimed.operator(),
                claimed.reason(),
                "bulk action " + id);
        Set<Long> changed = new java.util.HashSet<>(settled.replayed());
        changed.addAll(settled.discarded());
        Set<Long> nothingLeft = Set.copyOf(settled.skipped());
        String[] outcomes = new String[seqs.size()];
        String[] details = new String[seqs.size()];
        for (int i = 0; i < seqs.size(); i++) {
            long letter = ids.get(i);
            if (changed.contains(letter)) {
                outcomes[i] = "done";
            } else if (nothingLeft.contains(letter)) {
                outcomes[i] = "skipped";
                details[i] = "its attempt has nothing left to do; settled without a replay";
            } else {
                outcomes[i] = "skipped";
                details[i] = "no longer pending: settled by another action";
            }
        }
        try (PreparedStatement update =
                connection.prepareStatement("UPDATE bulk_action_item i SET outcome = x.outcome, detail = x.detail"
                        + " FROM unnest(?::int[], ?::text[], ?::text[]) AS x(seq, outcome, detail)"
                        + " WHERE i.bulk_action_id = ? AND i.seq = x.seq")) {
            update.setArray(1, connection.createArrayOf("integer", seqs.toArray()));
            update.setArray(2, connection.createArrayOf("text", outcomes));
            update.setArray(3, connection.createArrayOf("text", details));
            update.setLong(4, id);
            update.executeUpdate();
        }
        if (!settled.replayed().isEmpty()) {
            metrics.replayed(settled.replayed().size());
        }
    }

    /** The single action on one job or attempt, in the caller's transaction: {outcome, detail}. */
    private String[] act(BulkAction action, UUID target, Caller caller, String reason, String context, long id) {
        switch (action) {
            case JOB_CANCEL -> {
                Object state = em.createNativeQuery("SELECT state FROM job WHERE id = ?1 FOR UPDATE")
                        .setParameter(1, target)
                        .getResultStream()
                        .findFirst()
                        .orElse(null);
                if ("cancelled".equals(state)) {
                    return new String[] {"skipped", "already cancelled"};
                }
                cancellation.cancel(caller, target, reason, context);
                return new String[] {"done", null};
            }
            case JOB_RETRY -> {
                String provider = (String) em.createNativeQuery("SELECT provider FROM job WHERE id = ?1")
                        .setParameter(1, target)
                        .getSingleResult();
                // The bulk action's own key: a batch run again after a crash replays this attempt.
                String key = "bulk-" + id;
                Replayable<Attempt> attempt =
                        attemptRequests.request(caller, target, key, provider, null, Sha256.hex("bulk action " + id));
                if (!attempt.created()) {
                    return new String[] {"skipped", "attempt " + attempt.value().id() + " requested before"};
                }
                audit.record(
                        caller.subject(),
                        "attempt.request",
                        reason,
                        target,
                        attempt.value().id(),
                        context);
                return new String[] {"done", "attempt " + attempt.value().id()};
            }
            case QUARANTINE_FAIL -> {
                quarantine.resolveAsFailed(caller, target, reason, context);
                return new String[] {"done", null};
            }
            default -> throw new IllegalStateException(action + " is not an action on jobs or attempts");
        }
    }

    private void outcome(long id, int seq, String outcome, String detail) {
        em.createNativeQuery("UPDATE bulk_action_item SET outcome = ?1, detail = ?2"
                        + " WHERE bulk_action_id = ?3 AND seq = ?4 AND outcome IS NULL")
                .setParameter(1, outcome)
                .setParameter(2, detail)
                .setParameter(3, id)
                .setParameter(4, seq)
                .executeUpdate();
    }

    /** Bulk actions with items left, oldest first (the runner's work). */
    public List<Long> running() {
        return QuarkusTransaction.requiringNew().call(() -> {
            List<?> ids = em.createNativeQuery("SELECT id FROM bulk_action WHERE finished_at IS NULL ORDER BY id")
                    .getResultList();
            return ids.stream().map(n -> ((Number) n).longValue()).toList();
        });
    }

    /** The bulk action's progress, or a 404. */
    public Progress progress(long id) {
        List<Progress> found = progresses("WHERE b.id = ?", id, 1);
        if (found.isEmpty()) {
            throw new ProblemException(Problem.NOT_FOUND, "No bulk action " + id + ".");
        }
        return found.get(0);
    }

    /** The newest bulk actions first. */
    public List<Progress> recent(int limit) {
        return progresses("WHERE b.id > ?", 0L, limit);
    }

    private List<Progress> progresses(String where, long parameter, int limit) {
        return QuarkusTransaction.requiringNew()
                .call(() -> work(connection -> {
                    List<Progress> found = new ArrayList<>();
                    try (PreparedStatement select = connection.prepareStatement(
                            "SELECT b.id, b.action, b.filter::text, b.reason, b.requested_by, b.finished_at IS NULL, b.total,"
                                    + " b.created_at, b.finished_at,"
                                    + " (SELECT count(*) FILTER (WHERE i.outcome = 'done') || ',' ||"
                                    + " count(*) FILTER (WHERE i.outcome = 'skipped') || ',' ||"
                                    + " count(*) FILTER (WHERE i.outcome = 'refused')"
                                    + " FROM bulk_action_item i WHERE i.bulk_action_id = b.id)"
                                    + " FROM bulk_action b " + where + " ORDER BY b.id DESC LIMIT ?")) {
                        select.setLong(1, parameter);
                        select.setInt(2, limit);
                        try (ResultSet rows = select.executeQuery()) {
                            while (rows.next()) {
                                long id = rows.getLong(1);
                                String[] counts = rows.getString(10).split(",");
                                int done = Integer.parseInt(counts[0]);
                                int skipped = Integer.parseInt(counts[1]);
                                int refused = Integer.parseInt(counts[2]);
                                Timestamp finished = rows.getTimestamp(9);
                                found.add(new Progress(
                                        Long.toString(id),
                                        rows.getString(2),
                                        filter(rows.getString(3)),
                                        rows.getString(4),
                                        rows.getString(5),
                                        rows.getBoolean(6) ? "running" : "done",
                                        rows.getInt(7),
                                        done + skipped + refused,
                                        done,
                                        skipped,
                                        refused,
                                        refused == 0 ? List.of() : refusals(connection, id),
                                        rows.getTimestamp(8).toInstant(),
                                        finished == null ? null : finished.toInstant()));
                            }
                        }
                    }
                    return found;
                }));
    }

    private static List<Refusal> refusals(Connection connection, long id) throws SQLException {
        List<Refusal> refusals = new ArrayList<>();
        try (PreparedStatement select = connection.prepareStatement("SELECT target, detail FROM bulk_action_item"
                + " WHERE bulk_action_id = ? AND outcome = 'refused' ORDER BY seq LIMIT " + REFUSALS_SHOWN)) {
            select.setLong(1, id);
            try (ResultSet rows = select.executeQuery()) {
                while (rows.next()) {
                    refusals.add(new Refusal(rows.getString(1), rows.getString(2)));
                }
            }
        }
        return refusals;
    }

    private Map<String, String> filter(String stored) {
        try {
            return json.readValue(stored, new TypeReference<Map<String, String>>() {});
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("bulk_action.filter holds what start() wrote", e);
        }
    }

    @FunctionalInterface
    private interface Work<T> {
        T run(Connection connection) throws SQLException;
    }

    /** Plain JDBC on the transaction's connection. */
    private <T> T work(Work<T> work) {
        return em.unwrap(Session.class).doReturningWork(work::run);
    }
}
