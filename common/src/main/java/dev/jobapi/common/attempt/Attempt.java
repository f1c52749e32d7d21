package dev.jobapi.common.attempt;

import dev.jobapi.common.database.Rows;
import dev.jobapi.common.text.StoredText;
import jakarta.persistence.Column;
import jakarta.persistence.Convert;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import jakarta.persistence.Version;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.UUID;

/**
 * One try of a job at one provider. Created by the API together with its outbox row; moved on by
 * the worker and by reviewers, always through the guarded intent-named methods below.
 */
@Entity
@Table(name = "attempt")
public class Attempt {

    @Id
    private UUID id;

    @Column(name = "job_id", nullable = false, updatable = false)
    private UUID jobId;

    @Column(name = "idempotency_key", updatable = false)
    private String idempotencyKey;

    @Column(name = "request_digest", updatable = false)
    private String requestDigest;

    @Column(name = "provider", nullable = false, updatable = false)
    private String provider;

    @Convert(converter = AttemptStateConverter.class)
    @Column(name = "state", nullable = false)
    private AttemptState state;

    @Column(name = "request_key", nullable = false, updatable = false)
    private String requestKey;

    @Column(name = "remote_id")
    private String remoteId;

    @Column(name = "output_digest")
    private String outputDigest;

    @Column(name = "reason")
    private String reason;

    @Column(name = "reviewed_by")
    private String reviewedBy;

    /*
     * The lease and the send are written only by the worker's statements (the claim, its hand-back,
     * the renewal), never by the ORM: a renewal raises no version, so an entity written back would
     * put the lease it loaded over a renewal made since.
     */
    @Column(name = "lease_owner", updatable = false)
    private String leaseOwner;

    @Column(name = "lease_expires_at", updatable = false)
    private Instant leaseExpiresAt;

    @Column(name = "sent_at", updatable = false)
    private Instant sentAt;

    @Version
    @Column(name = "version", nullable = false)
    private long version;

    @Column(name = "created_at", nullable = false, updatable = false)
    private Instant createdAt;

    @Column(name = "updated_at", nullable = false)
    private Instant updatedAt;

    /**
     * The most the call can cost, reserved in the owner's budgets at the claim (rule 20), and the cost
     * of the usage the provider reported: read here, written only by the claim's statement and the
     * database's settlement triggers, never by the ORM.
     */
    @Column(name = "reserved_usd", insertable = false, updatable = false)
    private BigDecimal reservedUsd;

    @Column(name = "cost_usd", insertable = false, updatable = false)
    private BigDecimal costUsd;

    /** The columns {@link #read} reads, in its order. */
    private static final String[] COLUMNS = {
        "id",
        "job_id",
        "idempotency_key",
        "request_digest",
        "provider",
        "state",
        "request_key",
        "remote_id",
        "output_digest",
        "reason",
        "reviewed_by",
        "lease_owner",
        "lease_expires_at",
        "sent_at",
        "version",
        "created_at",
        "updated_at",
        "reserved_usd",
        "cost_usd"
    };

    /** How many columns of a row {@link #read} reads. */
    public static final int COLUMN_COUNT = COLUMNS.length;

    /**
     * Writes back what a step may change of an attempt it read with {@link #read}, when its row is
     * still at the version read, and raises the version: the compare-and-swap of {@code @Version},
     * for every column the entity may update ({@link Changeable}), in one statement.
     */
    private static final String WRITE_BACK = "UPDATE attempt SET state = ?, remote_id = ?, output_digest = ?,"
            + " reason = ?, reviewed_by = ?, updated_at = ?, version = version + 1 WHERE id = ? AND version = ?";

    /**
     * The columns of an attempt that may change once it exists, as a step holds them: compared with
     * what it held at the load, they say whether the row needs writing back.
     */
    public record Changeable(
            AttemptState state,
            String remoteId,
            String outputDigest,
            String reason,
            String reviewedBy,
            Instant updatedAt) {}

    protected Attempt() {}

    /** The select list {@link #read} reads, each column qualified by {@code alias}. */
    public static String columns(String alias) {
        return Rows.qualified(alias, COLUMNS);
    }

    /**
     * The attempt of a row selected with {@link #columns}, from its column {@code first} on: for a
     * caller that reads it with plain SQL and writes it back with {@link #writeBack}.
     */
    public static Attempt read(ResultSet row, int first) throws SQLException {
        Attempt attempt = new Attempt();
        int column = first;
        attempt.id = row.getObject(column++, UUID.class);
        attempt.jobId = row.getObject(column++, UUID.class);
        attempt.idempotencyKey = row.getString(column++);
        attempt.requestDigest = row.getString(column++);
        attempt.provider = row.getString(column++);
        attempt.state = AttemptState.fromWireName(row.getString(column++));
        attempt.requestKey = row.getString(column++);
        attempt.remoteId = row.getString(column++);
        attempt.outputDigest = row.getString(column++);
        attempt.reason = row.getString(column++);
        attempt.reviewedBy = row.getString(column++);
        attempt.leaseOwner = row.getString(column++);
        attempt.leaseExpiresAt = Rows.instant(row, column++);
        attempt.sentAt = Rows.instant(row, column++);
        attempt.version = row.getLong(column++);
        attempt.createdAt = Rows.instant(row, column++);
        attempt.updatedAt = Rows.instant(row, column++);
        attempt.reservedUsd = row.getBigDecimal(column++);
        attempt.costUsd = row.getBigDecimal(column);
        return attempt;
    }

    /** What of this attempt may change (every column the entity may update, but its version). */
    public Changeable changeable() {
        return new Changeable(state, remoteId, outputDigest, reason, reviewedBy, updatedAt);
    }

    /**
     * Writes back the {@link #changeable} columns of this attempt, read with {@link #read}, on
     * {@code connection}, unless another transaction wrote its row since the read.
     *
     * @return false when another transaction wrote the row since (nothing is written then)
     */
    public boolean writeBack(Connection connection) throws SQLException {
        try (PreparedStatement update = connection.prepareStatement(WRITE_BACK)) {
            update.setString(1, state.wireName());
            update.setString(2, remoteId);
            update.setString(3, outputDigest);
            update.setString(4, reason);
            update.setString(5, reviewedBy);
            update.setObject(6, OffsetDateTime.ofInstant(updatedAt, ZoneOffset.UTC));
            update.setObject(7, id);
            update.setLong(8, version);
            if (update.executeUpdate() == 0) {
                return false;
            }
        }
        version++;
        return true;
    }

    /** A new attempt, ready to be announced through the outbox. */
    public static Attempt starting(
            UUID jobId, String provider, String idempotencyKey, String requestDigest, Instant now) {
        Attempt attempt = new Attempt();
        attempt.id = UUID.randomUUID();
        attempt.jobId = jobId;
        attempt.provider = provider;
        attempt.idempotencyKey = idempotencyKey;
        attempt.requestDigest = requestDigest;
        attempt.state = AttemptState.STARTING;
        // Our own key for this attempt, handed to the provider with every transport send.
        attempt.requestKey = "attempt-" + attempt.id;
        attempt.createdAt = now;
        attempt.updatedAt = now;
        return attempt;
    }

    /** This attempt's result won the job. */
    public void succeed(Instant now) {
        moveTo(AttemptState.SUCCEEDED, null, now);
    }

    public void fail(String reason, Instant now) {
        moveTo(AttemptState.FAILED, reason, now);
    }

    /** This winner's patch was refused by the apply target for good: it failed after winning. */
    public void failApply(String reason, Instant now) {
        if (state != AttemptState.SUCCEEDED) {
            throw new IllegalStateException("Only a winner's apply can be refused; attempt " + id + " is " + state);
        }
        moveTo(AttemptState.FAILED, reason, now);
    }

    /** The provider may have the request; we do not know what it did. */
    public void markUnknown(String reason, Instant now) {
        moveTo(AttemptState.UNKNOWN, reason, now);
    }

    /**
     * The provider answered without usage: fail closed, hold the output until an operator reconciles
     * it. From starting, or from unknown when its result arrived after the answer was given up for lost.
     */
    public void quarantine(String reason, Instant now) {
        moveTo(AttemptState.QUARANTINED, reason, now);
    }

    /**
     * An operator recorded the reconciled usage: the attempt is unknown again, with its answer and its
     * usage stored, and goes to the election like any reconciled result.
     */
    public void releaseFromQuarantine(Instant now) {
        moveTo(AttemptState.UNKNOWN, null, now);
    }

    /** Another attempt won or the job closed; this one's output is kept and never applied. */
    public void lose(String reason, Instant now) {
        moveTo(AttemptState.SUPERSEDED, reason, now);
    }

    /** A reviewer replaced this open attempt, giving a reason. */
    public void supersede(String reason, String reviewer, Instant now) {
        moveTo(AttemptState.SUPERSEDED, reason, now);
        reviewedBy = reviewer;
    }

    /** The provider's own id for the request, as soon as it is known. */
    public void recordRemoteId(String remoteId, Instant now) {
        this.remoteId = StoredText.of(remoteId);
        this.updatedAt = now;
    }

    /** The generation this attempt produced is stored; its digest identifies it. */
    public void recordOutput(String outputDigest, Instant now) {
        this.outputDigest = outputDigest;
        this.updatedAt = now;
    }

    private void moveTo(AttemptState target, String reason, Instant now) {
        state.guardMoveTo(target);
        state = target;
        if (reason != null) {
            this.reason = StoredText.of(reason);
        }
        updatedAt = now;
    }

    public UUID id() {
        return id;
    }

    public UUID jobId() {
        return jobId;
    }

    public String idempotencyKey() {
        return idempotencyKey;
    }

    public String requestDigest() {
        return requestDigest;
    }

    public String provider() {
        return provider;
    }

    public AttemptState state() {
        return state;
    }

    public String requestKey() {
        return requestKey;
    }

    public String remoteId() {
        return remoteId;
    }

    public String outputDigest() {
        return outputDigest;
    }

    public String reason() {
        return reason;
    }

    public String reviewedBy() {
        return reviewedBy;
    }

    public String leaseOwner() {
        return leaseOwner;
    }

    public Instant leaseExpiresAt() {
        return leaseExpiresAt;
    }

    public Instant sentAt() {
        return sentAt;
    }

    public Instant createdAt() {
        return createdAt;
    }

    public Instant updatedAt() {
        return updatedAt;
    }

    public BigDecimal reservedUsd() {
        return reservedUsd;
    }

    public BigDecimal costUsd() {
        return costUsd;
    }
}
