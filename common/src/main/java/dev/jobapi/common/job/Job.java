package dev.jobapi.common.job;

import dev.jobapi.common.database.Rows;
import dev.jobapi.common.text.StoredText;
import jakarta.persistence.Column;
import jakarta.persistence.Convert;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import jakarta.persistence.Version;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.UUID;

/**
 * One user intention. Rows are inserted by {@code JobIntake} with {@code ON CONFLICT DO NOTHING};
 * state changes only through the intent-named methods below, each guarded by {@link JobState}.
 */
@Entity
@Table(name = "job")
public class Job {

    /** The cancel reason of a job that reached its deadline with nothing left open. */
    public static final String EXPIRED = "expired";

    @Id
    private UUID id;

    @Column(name = "owner_id", nullable = false, updatable = false)
    private String ownerId;

    @Column(name = "idempotency_key", nullable = false, updatable = false)
    private String idempotencyKey;

    @Column(name = "input_digest", nullable = false, updatable = false)
    private String inputDigest;

    /** The canonical JSON of the client's input object. */
    @Column(name = "input", nullable = false, updatable = false)
    private String input;

    @Column(name = "provider", nullable = false, updatable = false)
    private String provider;

    /** Where automatic fallback may move, in order, after a definitive failure (docs/design.md, rule 12). */
    @Column(name = "fallback_providers", nullable = false, updatable = false)
    private String[] fallbackProviders;

    @Convert(converter = JobStateConverter.class)
    @Column(name = "state", nullable = false)
    private JobState state;

    @Column(name = "winning_attempt_id")
    private UUID winningAttemptId;

    @Column(name = "review_reason")
    private String reviewReason;

    /** When set, no provider call starts for the job from this instant on (rule 18). */
    @Column(name = "deadline", updatable = false)
    private Instant deadline;

    /** Why a cancelled job was cancelled, when not by a person: {@link #EXPIRED}. */
    @Column(name = "cancel_reason")
    private String cancelReason;

    @Version
    @Column(name = "version", nullable = false)
    private long version;

    @Column(name = "created_at", nullable = false, updatable = false)
    private Instant createdAt;

    @Column(name = "updated_at", nullable = false)
    private Instant updatedAt;

    /** The columns {@link #read} reads, in its order. */
    private static final String[] COLUMNS = {
        "id",
        "owner_id",
        "idempotency_key",
        "input_digest",
        "input",
        "provider",
        "fallback_providers",
        "state",
        "winning_attempt_id",
        "review_reason",
        "deadline",
        "cancel_reason",
        "version",
        "created_at",
        "updated_at"
    };

    /** How many columns of a row {@link #read} reads. */
    public static final int COLUMN_COUNT = COLUMNS.length;

    /**
     * Writes back what a step may change of a job it read with {@link #read}, when its row is still
     * at the version read, and raises the version: the compare-and-swap of {@code @Version}, for
     * every column the entity may update ({@link Changeable}), in one statement.
     */
    private static final String WRITE_BACK = "UPDATE job SET state = ?, winning_attempt_id = ?, review_reason = ?,"
            + " cancel_reason = ?, updated_at = ?, version = version + 1 WHERE id = ? AND version = ?";

    /**
     * The columns of a job that may change once it exists, as a step holds them: compared with what
     * it held at the load, they say whether the row needs writing back, and whether the write elects.
     */
    public record Changeable(
            JobState state, UUID winningAttemptId, String reviewReason, String cancelReason, Instant updatedAt) {}

    protected Job() {}

    /** The select list {@link #read} reads, each column qualified by {@code alias}. */
    public static String columns(String alias) {
        return Rows.qualified(alias, COLUMNS);
    }

    /**
     * The job of a row selected with {@link #columns}, from its column {@code first} on: for a caller
     * that reads it with plain SQL and writes it back with {@link #writeBack}, or, when it elected,
     * through a stateless session, which checks its {@code @Version} (the election's
     * compare-and-swap, rule 6).
     */
    public static Job read(ResultSet row, int first) throws SQLException {
        Job job = new Job();
        int column = first;
        job.id = row.getObject(column++, UUID.class);
        job.ownerId = row.getString(column++);
        job.idempotencyKey = row.getString(column++);
        job.inputDigest = row.getString(column++);
        job.input = row.getString(column++);
        job.provider = row.getString(column++);
        job.fallbackProviders = (String[]) row.getArray(column++).getArray();
        job.state = JobState.fromWireName(row.getString(column++));
        job.winningAttemptId = row.getObject(column++, UUID.class);
        job.reviewReason = row.getString(column++);
        job.deadline = Rows.instant(row, column++);
        job.cancelReason = row.getString(column++);
        job.version = row.getLong(column++);
        job.createdAt = Rows.instant(row, column++);
        job.updatedAt = Rows.instant(row, column);
        return job;
    }

    /**
     * The job a fresh intake writes, as it is written: intake inserts these values with a
     * conditional statement ({@code ON CONFLICT} on owner and key) and answers with this object
     * instead of reading the row back. {@code now} must already be at the database's precision.
     */
    public static Job accepted(
            UUID id,
            String ownerId,
            String idempotencyKey,
            String inputDigest,
            String input,
            String provider,
            List<String> fallbackProviders,
            Instant deadline,
            Instant now) {
        Job job = new Job();
        job.id = id;
        job.ownerId = ownerId;
        job.idempotencyKey = idempotencyKey;
        job.inputDigest = inputDigest;
        job.input = input;
        job.provider = provider;
        job.fallbackProviders = fallbackProviders.toArray(String[]::new);
        job.deadline = deadline;
        job.state = JobState.ACCEPTED;
        job.version = 0;
        job.createdAt = now;
        job.updatedAt = now;
        return job;
    }

    /** What of this job may change (every column the entity may update, but its version). */
    public Changeable changeable() {
        return new Changeable(state, winningAttemptId, reviewReason, cancelReason, updatedAt);
    }

    /**
     * Writes back the {@link #changeable} columns of this job, read with {@link #read}, on {@code
     * connection}, unless another transaction wrote its row since the read. Not for the election:
     * a write that changes the winner goes through the entity's {@code @Version} (rule 6).
     *
     * @return false when another transaction wrote the row since (nothing is written then)
     */
    public boolean writeBack(Connection connection) throws SQLException {
        try (PreparedStatement update = connection.prepareStatement(WRITE_BACK)) {
            update.setString(1, state.wireName());
            update.setObject(2, winningAttemptId);
            update.setString(3, reviewReason);
            update.setString(4, cancelReason);
            update.setObject(5, OffsetDateTime.ofInstant(updatedAt, ZoneOffset.UTC));
            update.setObject(6, id);
            update.setLong(7, version);
            if (update.executeUpdate() == 0) {
                return false;
            }
        }
        version++;
        return true;
    }

    /** A worker claimed one of the job's attempts. Idempotent when the job already runs. */
    public void start(Instant now) {
        if (state != JobState.RUNNING) {
            moveTo(JobState.RUNNING, now);
        }
    }

    /**
     * Starts the job as a statement of the caller's own already wrote it, with its version checked
     * and raised ({@code state} running, {@code updated_at} {@code now}): for a start written
     * together with another row in one statement (the claim of its attempt), which {@link #writeBack}
     * must not write again.
     */
    public void startedByStatement(Instant now) {
        start(now);
        version++;
    }

    /** An attempt's outcome is unknown: a person has to look before anything else is tried. */
    public void requireReview(String reason, Instant now) {
        if (state != JobState.NEEDS_REVIEW) {
            moveTo(JobState.NEEDS_REVIEW, now);
        }
        this.reviewReason = StoredText.of(reason);
    }

    /**
     * The attempt that just ended was the last one open and none won: the job waits for its owner
     * (another attempt, or cancel) in review, with what ended it stated. A job is never left
     * {@code running} with nothing left to run (docs/design.md, rule 14).
     */
    public void awaitOwner(String whatEnded, Instant now) {
        if (state.isTerminal() || winningAttemptId != null) {
            return; // closed, or another attempt won: nothing waits for the owner
        }
        requireReview(whatEnded + "; no attempt is left open: ask for another attempt or cancel", now);
    }

    /** A reviewer replaced the open attempts with a new one; the job runs again. */
    public void resumeAfterReview(Instant now) {
        if (state == JobState.NEEDS_REVIEW) {
            moveTo(JobState.RUNNING, now);
            reviewReason = null; // what the review was for is settled; the timeline keeps it
        }
    }

    /**
     * One winner (rule 6): this attempt's result is the job's. The write carries the version this
     * transaction read, so of two elections racing on a job only the first to commit succeeds; the
     * other fails its version check and, run again, finds the winner and loses.
     */
    public void elect(UUID attemptId, Instant now) {
        if (winningAttemptId != null || state.isTerminal()) {
            throw new IllegalStateException(
                    "Job " + id + " has a winner or is closed; attempt " + attemptId + " cannot win it.");
        }
        winningAttemptId = attemptId;
        updatedAt = now;
    }

    /**
     * The apply target refused the winner's patch for good: the job has no winner again and waits
     * for a person (its owner asks for another attempt or cancels), with the reason stated.
     */
    public void releaseRefusedWinner(String reason, Instant now) {
        winningAttemptId = null;
        requireReview(reason, now);
        updatedAt = now;
    }

    /** The winner's result was applied. */
    public void complete(Instant now) {
        if (winningAttemptId == null) {
            throw new IllegalStateException("Job " + id + " cannot complete without a winning attempt.");
        }
        moveTo(JobState.COMPLETED, now);
    }

    public void cancel(Instant now) {
        moveTo(JobState.CANCELLED, now);
    }

    /** The deadline passed with nothing of the job left open and nothing won: it ends here. */
    public void expire(Instant now) {
        moveTo(JobState.CANCELLED, now);
        cancelReason = EXPIRED;
    }

    /** Whether a provider call starting at {@code now} would start at or after the job's deadline. */
    public boolean pastDeadline(Instant now) {
        return deadline != null && !now.isBefore(deadline);
    }

    private void moveTo(JobState target, Instant now) {
        state.guardMoveTo(target);
        state = target;
        updatedAt = now;
    }

    public UUID id() {
        return id;
    }

    public String ownerId() {
        return ownerId;
    }

    public String idempotencyKey() {
        return idempotencyKey;
    }

    public String inputDigest() {
        return inputDigest;
    }

    public String input() {
        return input;
    }

    public String provider() {
        return provider;
    }

    public List<String> fallbackProviders() {
        return List.of(fallbackProviders);
    }

    public JobState state() {
        return state;
    }

    public UUID winningAttemptId() {
        return winningAttemptId;
    }

    public String reviewReason() {
        return reviewReason;
    }

    public Instant deadline() {
        return deadline;
    }

    public String cancelReason() {
        return cancelReason;
    }

    public long version() {
        return version;
    }

    public Instant createdAt() {
        return createdAt;
    }

    public Instant updatedAt() {
        return updatedAt;
    }
}
