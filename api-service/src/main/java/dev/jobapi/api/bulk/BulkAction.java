package dev.jobapi.api.bulk;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.common.job.JobState;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The bulk actions and what each may act on. Every action's candidates are one SQL query, the
 * {@link #targets(BulkFilter) targets}: the dry run counts and samples it, the execution freezes it
 * into items, so both see the same set. A candidate is what the single action would accept now;
 * the single action's own checks still run for each item when it is processed.
 */
public enum BulkAction {
    /** Pending dead letters whose attempt exists: replayed through the outbox, or skipped (nothing left to do). */
    DLQ_REPLAY("dlq-replay", Kind.DEAD_LETTER, false),
    /** Pending dead letters: discarded, with a reason. */
    DLQ_DISCARD("dlq-discard", Kind.DEAD_LETTER, true),
    /** Jobs with no result yet: cancelled, as their cancel would. */
    JOB_CANCEL("job-cancel", Kind.JOB, false),
    /** Jobs in review whose attempts all failed: a new attempt at the job's provider, as a request would. */
    JOB_RETRY("job-retry", Kind.JOB, false),
    /** Attempts held in quarantine: failed, with a reason, as the operator's resolve would. */
    QUARANTINE_FAIL("quarantine-fail", Kind.ATTEMPT, true);

    /** What the targets are. */
    enum Kind {
        DEAD_LETTER,
        JOB,
        ATTEMPT
    }

    private final String wire;
    private final Kind kind;
    private final boolean reasonRequired;

    BulkAction(String wire, Kind kind, boolean reasonRequired) {
        this.wire = wire;
        this.kind = kind;
        this.reasonRequired = reasonRequired;
    }

    public String wire() {
        return wire;
    }

    Kind kind() {
        return kind;
    }

    public boolean reasonRequired() {
        return reasonRequired;
    }

    /** The action this path segment names, or a 404 listing the ones there are. */
    public static BulkAction ofWire(String wire) {
        return Arrays.stream(values())
                .filter(a -> a.wire.equals(wire))
                .findFirst()
                .orElseThrow(() -> new ProblemException(
                        Problem.NOT_FOUND,
                        "No bulk action '" + wire + "'; there are "
                                + String.join(
                                        ", ",
                                        Arrays.stream(values())
                                                .map(BulkAction::wire)
                                                .toList()) + "."));
    }

    /** A SQL text and its parameters, bound in order. */
    record Sql(String text, List<Object> parameters) {
        int bind(PreparedStatement statement, int first) throws SQLException {
            int i = first;
            for (Object p : parameters) {
                if (p instanceof Instant at) {
                    statement.setTimestamp(i++, Timestamp.from(at));
                } else {
                    statement.setObject(i++, p);
                }
            }
            return i;
        }
    }

    /**
     * The candidates this filter matches, as a query with the columns {@code seq} (1, 2, ... in the
     * order the items are processed), {@code target} (the dead letter's, job's or attempt's id as
     * text), {@code job_id}, {@code owner_id}, {@code provider}, {@code state}, {@code reason} and
     * {@code at} (the time since/until bound). A filter this action cannot take is a 400.
     */
    Sql targets(BulkFilter filter) {
        List<String> where = new ArrayList<>();
        List<Object> parameters = new ArrayList<>();
        String select;
        switch (kind) {
            case DEAD_LETTER -> {
                if (filter.state() != null && !filter.state().equals("pending")) {
                    throw new ProblemException(
                            Problem.INVALID_REQUEST, "A dead letter's bulk action takes 'state' pending or none.");
                }
                select = "SELECT row_number() OVER (ORDER BY d.id) AS seq, d.id::text AS target, d.job_id,"
                        + " d.owner_id, d.provider, 'pending' AS state, d.reason, d.dead_lettered_at AS at"
                        + " FROM dead_letter d";
                where.add("d.settlement IS NULL");
                if (this == DLQ_REPLAY) {
                    // A letter that names no attempt cannot be replayed; a replay leaves it pending.
                    where.add("EXISTS (SELECT 1 FROM attempt a WHERE a.id = d.attempt_id)");
                }
                equal(where, parameters, "d.owner_id", filter.owner());
                equal(where, parameters, "d.provider", filter.provider());
                equal(where, parameters, "d.reason", filter.reason());
                between(where, parameters, "d.dead_lettered_at", filter);
            }
            case JOB -> {
                select = "SELECT row_number() OVER (ORDER BY j.created_at, j.id) AS seq, j.id::text AS target,"
                        + " j.id AS job_id, j.owner_id, j.provider, j.state, j.review_reason AS reason,"
                        + " j.created_at AS at FROM job j";
                if (this == JOB_CANCEL) {
                    where.add("j.state = ANY(?) AND j.winning_attempt_id IS NULL");
                    parameters.add(JobState.wireNames(state -> !state.isTerminal()));
                } else {
                    where.add(
                            "j.state = 'needs_review' AND j.winning_attempt_id IS NULL"
                                    + " AND EXISTS (SELECT 1 FROM attempt a WHERE a.job_id = j.id)"
                                    + " AND NOT EXISTS (SELECT 1 FROM attempt a WHERE a.job_id = j.id AND a.state <> 'failed')");
                }
                jobFilter(where, parameters, filter, "j.provider", "j.review_reason");
            }
            case ATTEMPT -> {
                select = "SELECT row_number() OVER (ORDER BY a.updated_at, a.id) AS seq, a.id::text AS target,"
                        + " a.job_id, j.owner_id, a.provider, a.state, a.reason, j.created_at AS at"
                        + " FROM attempt a JOIN job j ON j.id = a.job_id";
                where.add("a.state = 'quarantined'");
                jobFilter(where, parameters, filter, "a.provider", "a.reason");
            }
            default -> throw new IllegalStateException(kind.name());
        }
        return new Sql(select + " WHERE " + String.join(" AND ", where), parameters);
    }

    private static void jobFilter(
            List<String> where, List<Object> parameters, BulkFilter filter, String provider, String reason) {
        if (filter.state() != null) {
            try {
                JobState.fromWireName(filter.state());
            } catch (IllegalArgumentException e) {
                throw new ProblemException(
                        Problem.INVALID_REQUEST,
                        "'state' must be a job's state: "
                                + String.join(
                                        ", ",
                                        Arrays.stream(JobState.values())
                                                .map(JobState::wireName)
                                                .toList())
                                + ".");
            }
            if (!filter.state().equals(filter.state().toLowerCase(Locale.ROOT))) {
                throw new ProblemException(Problem.INVALID_REQUEST, "'state' is written in lower case.");
            }
        }
        equal(where, parameters, "j.owner_id", filter.owner());
        equal(where, parameters, provider, filter.provider());
        equal(where, parameters, "j.state", filter.state());
        if (filter.reason() != null) {
            where.add("strpos(lower(" + reason + "), lower(?)) > 0");
            parameters.add(filter.reason());
        }
        between(where, parameters, "j.created_at", filter);
    }

    private static void equal(List<String> where, List<Object> parameters, String column, String value) {
        if (value != null) {
            where.add(column + " = ?");
            parameters.add(value);
        }
    }

    private static void between(List<String> where, List<Object> parameters, String column, BulkFilter filter) {
        if (filter.since() != null) {
            where.add(column + " >= ?");
            parameters.add(filter.since());
        }
        if (filter.until() != null) {
            where.add(column + " < ?");
            parameters.add(filter.until());
        }
    }
}
