package dev.jobapi.api.stream;

import dev.jobapi.common.job.JobState;
import io.agroal.api.AgroalDataSource;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * Reads job_event after a cursor, in the order the feed and the streams follow: by writing
 * transaction, then id, and only events whose transaction is older than every transaction still
 * running (its id below the snapshot's xmin). Every event a later read can see then comes after
 * what this read returned, so a cursor never skips one (docs/design.md "Push"). Plain JDBC on
 * connections of their own: a stream's reads run outside any request.
 */
@ApplicationScoped
public class TimelineReads {

    /** A job's events after a cursor, whether more wait behind a transaction still running, and its state. */
    public record JobBatch(List<FeedEvent> released, boolean heldBack, boolean full, Optional<JobState> state) {}

    private static final String RELEASED = "e.tx < pg_snapshot_xmin(pg_current_snapshot())";

    private final AgroalDataSource database;

    TimelineReads(AgroalDataSource database) {
        this.database = database;
    }

    /**
     * Up to {@code limit} released events of the job after {@code after}. The job's state is read
     * first: when it is terminal, the events of the transaction that ended it are visible to the
     * events' read, so a batch with nothing held back and not full holds the job's last event.
     */
    public JobBatch ofJob(UUID jobId, EventCursor after, int limit) throws SQLException {
        try (Connection connection = database.getConnection()) {
            Optional<JobState> state = stateOf(connection, jobId);
            List<FeedEvent> released = new ArrayList<>();
            boolean heldBack = false;
            int read = 0;
            try (PreparedStatement select = connection.prepareStatement("SELECT e.tx::text, e.id, e.job_id, e.at,"
                    + " e.kind, e.attempt_id, e.detail, " + RELEASED + " FROM job_event e WHERE e.job_id = ?"
                    + " AND (e.tx, e.id) > (?::text::xid8, ?) ORDER BY e.tx, e.id LIMIT ?")) {
                select.setObject(1, jobId);
                select.setString(2, Long.toString(after.tx()));
                select.setLong(3, after.id());
                select.setInt(4, limit);
                try (ResultSet rows = select.executeQuery()) {
                    while (rows.next()) {
                        read++;
                        if (!rows.getBoolean(8)) {
                            heldBack = true; // and so is everything after it in this order
                            break;
                        }
                        released.add(event(rows));
                    }
                }
            }
            return new JobBatch(released, heldBack, read == limit, state);
        }
    }

    /** Up to {@code limit} released events of the owner's jobs after {@code after}. */
    public List<FeedEvent> ofOwner(String ownerId, EventCursor after, int limit) throws SQLException {
        try (Connection connection = database.getConnection();
                PreparedStatement select = connection.prepareStatement("SELECT e.tx::text, e.id, e.job_id, e.at,"
                        + " e.kind, e.attempt_id, e.detail FROM job_event e WHERE e.owner_id = ?"
                        + " AND (e.tx, e.id) > (?::text::xid8, ?) AND " + RELEASED
                        + " ORDER BY e.tx, e.id LIMIT ?")) {
            select.setString(1, ownerId);
            select.setString(2, Long.toString(after.tx()));
            select.setLong(3, after.id());
            select.setInt(4, limit);
            List<FeedEvent> events = new ArrayList<>();
            try (ResultSet rows = select.executeQuery()) {
                while (rows.next()) {
                    events.add(event(rows));
                }
            }
            return events;
        }
    }

    private static Optional<JobState> stateOf(Connection connection, UUID jobId) throws SQLException {
        try (PreparedStatement select = connection.prepareStatement("SELECT state FROM job WHERE id = ?")) {
            select.setObject(1, jobId);
            try (ResultSet row = select.executeQuery()) {
                return row.next() ? Optional.of(JobState.fromWireName(row.getString(1))) : Optional.empty();
            }
        }
    }

    private static FeedEvent event(ResultSet row) throws SQLException {
        return new FeedEvent(
                new EventCursor(Long.parseLong(row.getString(1)), row.getLong(2)).toString(),
                row.getObject(3, UUID.class),
                row.getLong(2),
                row.getObject(4, OffsetDateTime.class).toInstant(),
                row.getString(5),
                row.getObject(6, UUID.class),
                row.getString(7));
    }
}
