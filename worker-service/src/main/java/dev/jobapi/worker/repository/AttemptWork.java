package dev.jobapi.worker.repository;

import dev.jobapi.common.apply.ApplyKey;
import dev.jobapi.common.attempt.AttemptState;
import dev.jobapi.common.attempt.UsageSource;
import dev.jobapi.common.budget.SpendBudgets;
import dev.jobapi.common.database.CurrentTransaction;
import dev.jobapi.common.database.SqlWork;
import dev.jobapi.common.job.Job;
import dev.jobapi.common.job.JobState;
import dev.jobapi.worker.provider.ProviderOutcome;
import jakarta.inject.Singleton;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.math.BigDecimal;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * The worker's conditional and idempotent writes, as SQL: each one states the condition under which
 * it applies, and zero rows means a duplicate or a lost race, never an error.
 *
 * <p>The writes of a step's hot path go to the JDBC connection of its transaction, plain or JTA
 * ({@link #onConnection}): a Hibernate native query flushes the whole session first (twice a row in
 * the record step once, bench/ANALYSIS.md), and a plain transaction has no session. The rest, native
 * queries of the sweeps and the rarer branches, need a JTA transaction
 * ({@code @Transactional(MANDATORY)}): a step that meets one in a plain transaction runs again under
 * JTA ({@code AttemptSteps}).
 */
@Singleton
public class AttemptWork {

    /**
     * The attempts whose provider may hold an answer we lost: unknown ones, and superseded ones,
     * since the provider may still have worked and its spend must reach the ledger.
     */
    private static final String[] LOOKUP_STATES =
            AttemptState.wireNames(EnumSet.of(AttemptState.UNKNOWN, AttemptState.SUPERSEDED)::contains);

    /** The states in which an attempt may still produce a result. */
    private static final String[] OPEN_STATES = AttemptState.wireNames(AttemptState::isOpen);

    private final EntityManager em;
    private final CurrentTransaction transaction;

    AttemptWork(EntityManager em, CurrentTransaction transaction) {
        this.em = em;
        this.transaction = transaction;
    }

    private static final String CLAIM = "UPDATE attempt SET lease_owner = ?,"
            + " lease_expires_at = statement_timestamp() + ? * interval '1 millisecond',"
            + " sent_at = ?, updated_at = ?, version = version + 1,"
            + " price_id = ?, reserved_usd = ?, reserved_in = ?, reservation_open = ?"
            + " WHERE id = ? AND state = 'starting' AND lease_owner IS NULL"
            + " AND NOT EXISTS (SELECT 1 FROM generation WHERE attempt_id = ?)";

    /**
     * {@link #CLAIM} and the start of its job to running in one statement, where a step's end would
     * write the job with a statement of its own ({@code Job.writeBack}): one round trip a job fewer.
     */
    private static final String CLAIM_AND_START = "WITH claimed AS (" + CLAIM + " RETURNING 1),"
            + " started AS (UPDATE job SET state = ?, updated_at = ?, version = version + 1"
            + " WHERE id = ? AND version = ? AND EXISTS (SELECT 1 FROM claimed) RETURNING 1)"
            + " SELECT EXISTS (SELECT 1 FROM claimed), EXISTS (SELECT 1 FROM started)";

    /** What a claim wrote: the attempt's claim, and the start of its job when it was asked to. */
    public record Claim(boolean claimed, boolean jobStarted) {}

    /**
     * Claims a starting attempt that nobody holds and whose answer is not stored, and records that
     * its request goes out now, at which price and with which money reservation (rule 20). The lease
     * runs on the database's clock, so workers whose clocks differ agree on when it ends. Given a
     * job to start, the same statement starts it, one round trip: only when the claim matched, and
     * only at the version given (the write-back's compare-and-swap).
     *
     * @param jobToStart the attempt's job as loaded, when it is not running yet; else null
     * @return not claimed when another worker holds or held it, or its answer is stored already (the
     *     job is then not written); claimed but not started when the job changed since the load
     */
    public Claim claim(
            UUID attemptId,
            String workerId,
            Instant now,
            Duration lease,
            SpendBudgets.Reserved reservation,
            Job jobToStart) {
        return onConnection(connection -> {
            try (PreparedStatement claim = connection.prepareStatement(jobToStart == null ? CLAIM : CLAIM_AND_START)) {
                claim.setString(1, workerId);
                claim.setLong(2, lease.toMillis());
                claim.setObject(3, timestamp(now));
                claim.setObject(4, timestamp(now));
                claim.setObject(5, reservation.priceId(), Types.BIGINT);
                claim.setBigDecimal(6, reservation.amountUsd());
                claim.setArray(7, connection.createArrayOf("text", reservation.windowNames()));
                claim.setBoolean(8, reservation.amountUsd() != null);
                claim.setObject(9, attemptId);
                claim.setObject(10, attemptId);
                if (jobToStart == null) {
                    return new Claim(claim.executeUpdate() == 1, false);
                }
                claim.setString(11, JobState.RUNNING.wireName());
                claim.setObject(12, timestamp(now));
                claim.setObject(13, jobToStart.id());
                claim.setLong(14, jobToStart.version());
                try (ResultSet written = claim.executeQuery()) {
                    written.next();
                    return new Claim(written.getBoolean(1), written.getBoolean(2));
                }
            }
        });
    }

    /**
     * Hands back this worker's claim of a starting attempt whose call the provider declined with a
     * time to come back (rule 21): unclaimed, it waits for the provider's gate; its money reservation
     * is released by the database (V24's trigger).
     *
     * @return false when the claim is no longer this worker's
     */
    public boolean unclaim(UUID attemptId, String workerId, Instant now) {
        return onConnection(connection -> {
            try (PreparedStatement update = connection.prepareStatement("UPDATE attempt SET lease_owner = NULL,"
                    + " lease_expires_at = NULL, updated_at = ?, version = version + 1"
                    + " WHERE id = ? AND state = 'starting' AND lease_owner = ?")) {
                update.setObject(1, timestamp(now));
                update.setObject(2, attemptId);
                update.setString(3, workerId);
                return update.executeUpdate() == 1;
            }
        });
    }

    /** Whether the attempt's lease is still running, by the database's clock. */
    public boolean leaseLive(UUID attemptId) {
        return onConnection(connection -> {
            try (PreparedStatement select = connection.prepareStatement(
                    "SELECT coalesce(lease_expires_at > statement_timestamp(), false) FROM attempt WHERE id = ?")) {
                select.setObject(1, attemptId);
                try (ResultSet row = select.executeQuery()) {
                    return row.next() && row.getBoolean(1);
                }
            }
        });
    }

    /**
     * Extends this worker's lease while its provider call is in flight (the heartbeat).
     *
     * @return false when the lease is no longer this worker's to extend: it ran out, or the attempt
     *     moved on (superseded, cancelled, marked unknown)
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public boolean renewLease(UUID attemptId, String workerId, Duration lease) {
        return em.createNativeQuery("UPDATE attempt"
                                + " SET lease_expires_at = statement_timestamp() + ?1 * interval '1 millisecond'"
                                + " WHERE id = ?2 AND state = 'starting' AND lease_owner = ?3"
                                + " AND lease_expires_at > statement_timestamp()")
                        .setParameter(1, lease.toMillis())
                        .setParameter(2, attemptId)
                        .setParameter(3, workerId)
                        .executeUpdate()
                == 1;
    }

    /** Whether the attempt is still starting under this worker's live lease (database clock). */
    @Transactional(Transactional.TxType.MANDATORY)
    public boolean holdsLiveLease(UUID attemptId, String workerId) {
        return !em.createNativeQuery("SELECT 1 FROM attempt WHERE id = ?1 AND state = 'starting'"
                        + " AND lease_owner = ?2 AND lease_expires_at > statement_timestamp()")
                .setParameter(1, attemptId)
                .setParameter(2, workerId)
                .getResultList()
                .isEmpty();
    }

    /**
     * Whether an operator paused the provider (rule 19). The row is locked {@code FOR SHARE} until
     * this transaction ends, so a resume, which deletes it, waits for this claim and then announces
     * again whatever the claim left held. On the step's connection: a native query would flush the
     * step's entities first, for a table none of them maps (5 % of the worker's CPU in a profile).
     */
    public boolean providerPaused(String provider) {
        return onConnection(connection -> {
            try (PreparedStatement select =
                    connection.prepareStatement("SELECT 1 FROM provider_pause WHERE provider = ? FOR SHARE")) {
                select.setString(1, provider);
                try (ResultSet row = select.executeQuery()) {
                    return row.next();
                }
            }
        });
    }

    /** Counts one failed delivery of the attempt's message and returns the count so far. */
    @Transactional(Transactional.TxType.MANDATORY)
    public int countFailedDelivery(UUID attemptId) {
        List<?> counted = em.createNativeQuery("UPDATE attempt SET failed_deliveries = failed_deliveries + 1"
                        + " WHERE id = ?1 RETURNING failed_deliveries")
                .setParameter(1, attemptId)
                .getResultList();
        return counted.isEmpty() ? 0 : ((Number) counted.get(0)).intValue();
    }

    /**
     * Announces again, through the outbox, starting attempts nobody claimed within {@code after} and
     * with no announcement unsent or sent within it, at most {@code limit} of them. Choosing and
     * announcing are one statement over rows it locks, skipping rows another worker's sweep holds:
     * however many workers sweep at once, each attempt is announced again once per window. The new
     * row keeps the trace its first row kept, so the message it becomes continues the trace of the
     * request that made the attempt.
     *
     * @return the attempts announced again
     */
    @SuppressWarnings("unchecked")
    @Transactional(Transactional.TxType.MANDATORY)
    public List<UUID> reannounceUnclaimed(Duration after, int limit) {
        return em.createNativeQuery("INSERT INTO outbox (attempt_id, job_id, created_at, traceparent, tracestate)"
                        + " SELECT stranded.id, stranded.job_id, statement_timestamp(), first.traceparent,"
                        + " first.tracestate FROM (SELECT a.id, a.job_id, a.created_at FROM attempt a"
                        + " WHERE a.state = 'starting' AND a.lease_owner IS NULL"
                        + " AND a.created_at < statement_timestamp() - ?1 * interval '1 millisecond'"
                        // A paused provider's attempts are held; its resume announces them. So are those of a
                        // provider whose health gate is shut; it announces them when it opens (rule 21).
                        + " AND NOT EXISTS (SELECT 1 FROM provider_pause p WHERE p.provider = a.provider)"
                        + " AND NOT EXISTS (SELECT 1 FROM provider_health h WHERE h.provider = a.provider"
                        + " AND (h.state <> 'closed' OR h.limited_until > statement_timestamp()))"
                        + " AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.attempt_id = a.id AND (o.sent_at IS NULL"
                        + " OR o.sent_at > statement_timestamp() - ?1 * interval '1 millisecond'))"
                        + " ORDER BY a.created_at LIMIT ?2 FOR UPDATE OF a SKIP LOCKED) stranded"
                        + " LEFT JOIN LATERAL (SELECT traceparent, tracestate FROM outbox"
                        + " WHERE attempt_id = stranded.id AND traceparent IS NOT NULL ORDER BY id LIMIT 1) first"
                        + " ON true RETURNING attempt_id")
                .setParameter(1, after.toMillis())
                .setParameter(2, limit)
                .getResultList();
    }

    /**
     * Takes up to {@code limit} unknown or superseded attempts whose provider may still hold their
     * answer and that are due for a lookup, and stamps the lookup on them before it is made, in one
     * statement over rows it locks, skipping rows another worker's sweep holds: each attempt is
     * looked up by one worker per window, however many sweep. Each is due again once as long has
     * passed since its last lookup as had passed from its send to that lookup: the gaps double, so a
     * fresh lost answer is found within seconds even behind thousands of older ones the provider
     * never had.
     */
    @SuppressWarnings("unchecked")
    @Transactional(Transactional.TxType.MANDATORY)
    public List<UUID> takeDueLookups(Instant sentBefore, Instant sentAfter, int limit) {
        return em.createNativeQuery("UPDATE attempt SET looked_up_at = statement_timestamp() WHERE id IN ("
                        + "SELECT a.id FROM attempt a WHERE a.sent_at IS NOT NULL"
                        + " AND a.state = ANY(?4)"
                        + " AND NOT EXISTS (SELECT 1 FROM usage_record u WHERE u.attempt_id = a.id)"
                        + " AND a.sent_at < ?1 AND a.sent_at > ?2"
                        + " AND (a.looked_up_at IS NULL"
                        + " OR statement_timestamp() - a.looked_up_at >= a.looked_up_at - a.sent_at)"
                        + " ORDER BY a.looked_up_at NULLS FIRST, a.sent_at LIMIT ?3 FOR UPDATE SKIP LOCKED)"
                        + " RETURNING id")
                .setParameter(1, sentBefore)
                .setParameter(2, sentAfter)
                .setParameter(3, limit)
                .setParameter(4, LOOKUP_STATES)
                .getResultList();
    }

    /**
     * The sweep's first candidates: claimed attempts whose lease ran out (database clock) with
     * nothing stored, the longest expired first.
     */
    @SuppressWarnings("unchecked")
    @Transactional(Transactional.TxType.MANDATORY)
    public List<UUID> expiredLeasesWithNothingStored(int limit) {
        return em.createNativeQuery("SELECT a.id FROM attempt a WHERE a.state = 'starting'"
                        + " AND a.lease_owner IS NOT NULL AND a.lease_expires_at < statement_timestamp()"
                        + " AND NOT EXISTS (SELECT 1 FROM generation g WHERE g.attempt_id = a.id)"
                        + " ORDER BY a.lease_expires_at LIMIT ?1")
                .setParameter(1, limit)
                .getResultList();
    }

    /**
     * Attempts still waiting for their answer whose output and provider-reported usage are stored
     * but that were never elected. Only those older than a few seconds, so a pipeline on its way
     * from the store to the election goes first.
     */
    @SuppressWarnings("unchecked")
    @Transactional(Transactional.TxType.MANDATORY)
    public List<UUID> storedResultsNeverElected(int limit) {
        return em.createNativeQuery("SELECT a.id FROM attempt a WHERE a.state = ANY(?1)"
                        + " AND a.updated_at < statement_timestamp() - interval '5 seconds'"
                        + " AND EXISTS (SELECT 1 FROM generation g WHERE g.attempt_id = a.id)"
                        + " AND EXISTS (SELECT 1 FROM usage_record u WHERE u.attempt_id = a.id"
                        + " AND u.source = ?2)"
                        + " ORDER BY a.updated_at LIMIT ?3")
                .setParameter(1, AttemptState.wireNames(AttemptState::awaitsResult))
                .setParameter(2, UsageSource.PROVIDER_REPORTED.wireName())
                .setParameter(3, limit)
                .getResultList();
    }

    /**
     * Open jobs with a winner whose apply stopped before {@code stalledBefore} (a crash, no message
     * left) or was put back and is due again, the least recently tried first.
     *
     * @return pairs of job id and winning attempt id
     */
    @SuppressWarnings("unchecked")
    @Transactional(Transactional.TxType.MANDATORY)
    public List<Object[]> stalledApplies(Instant stalledBefore, int limit) {
        // job_apply_pending lists the open jobs with a winner (V34); the job's own columns decide.
        return em.createNativeQuery("SELECT j.id, j.winning_attempt_id FROM job_apply_pending p"
                        + " JOIN job j ON j.id = p.job_id WHERE j.winning_attempt_id IS NOT NULL"
                        + " AND j.state = ANY(?1)"
                        + " AND (j.apply_retry_at IS NULL AND j.updated_at < ?2"
                        + " OR j.apply_retry_at < statement_timestamp())"
                        + " ORDER BY j.apply_retry_at NULLS FIRST, j.updated_at LIMIT ?3")
                .setParameter(1, JobState.wireNames(state -> !state.isTerminal()))
                .setParameter(2, stalledBefore)
                .setParameter(3, limit)
                .getResultList();
    }

    private static final String INSERT_GENERATION =
            "INSERT INTO generation (attempt_id, patch, output_digest, created_at)"
                    + " VALUES (?, ?, ?, ?) ON CONFLICT (attempt_id) DO NOTHING";

    private static final String INSERT_USAGE =
            "INSERT INTO usage_record (attempt_id, owner_id, provider, prompt_tokens, completion_tokens,"
                    + " source, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (attempt_id) DO NOTHING";

    /**
     * Both inserts of an answer in one statement, one round trip: whether each row was written.
     * Rows of one statement are written together; the settlement trigger of the usage row (rule 20)
     * runs at its end, as after an insert of its own.
     */
    private static final String INSERT_ANSWER = "WITH generation_stored AS (" + INSERT_GENERATION + " RETURNING 1),"
            + " usage_stored AS (" + INSERT_USAGE + " RETURNING 1)"
            + " SELECT EXISTS (SELECT 1 FROM generation_stored), EXISTS (SELECT 1 FROM usage_stored)";

    /** Which rows of an answer {@link #storeAnswer} wrote: false where the attempt had one already. */
    public record StoredAnswer(boolean generationStored, boolean usageStored) {}

    /**
     * Stores a completed answer once per attempt: its generation, and what the provider reported it
     * spent ({@code usage} null: that it reported nothing). A row the attempt has already (another
     * path stored the answer first) stays as it is.
     */
    public StoredAnswer storeAnswer(
            UUID attemptId,
            byte[] patch,
            String outputDigest,
            String ownerId,
            String provider,
            ProviderOutcome.Usage usage,
            Instant now) {
        return onConnection(connection -> {
            try (PreparedStatement insert = connection.prepareStatement(INSERT_ANSWER)) {
                insert.setObject(1, attemptId);
                insert.setBytes(2, patch);
                insert.setString(3, outputDigest);
                insert.setObject(4, timestamp(now));
                bindUsage(insert, 5, attemptId, ownerId, provider, usage, now);
                try (ResultSet stored = insert.executeQuery()) {
                    stored.next();
                    return new StoredAnswer(stored.getBoolean(1), stored.getBoolean(2));
                }
            }
        });
    }

    /** An attempt's stored output (its generation row): the patch and the patch's digest. */
    public record StoredOutput(byte[] patch, String outputDigest) {}

    /**
     * The attempt's stored output; empty until an answer is stored, or once a loser's oversized one
     * was dropped. On the step's connection, so that a step on a plain transaction stays there (the
     * session's {@code find} needs JTA, and cost the step a second run).
     */
    public Optional<StoredOutput> storedOutput(UUID attemptId) {
        return onConnection(connection -> {
            try (PreparedStatement select =
                    connection.prepareStatement("SELECT patch, output_digest FROM generation WHERE attempt_id = ?")) {
                select.setObject(1, attemptId);
                try (ResultSet row = select.executeQuery()) {
                    return row.next()
                            ? Optional.of(new StoredOutput(row.getBytes(1), row.getString(2)))
                            : Optional.empty();
                }
            }
        });
    }

    /** Whether the attempt has a stored output, without reading the patch. */
    public boolean outputStored(UUID attemptId) {
        return onConnection(connection -> {
            try (PreparedStatement select =
                    connection.prepareStatement("SELECT EXISTS (SELECT 1 FROM generation WHERE attempt_id = ?)")) {
                select.setObject(1, attemptId);
                try (ResultSet row = select.executeQuery()) {
                    row.next();
                    return row.getBoolean(1);
                }
            }
        });
    }

    /** Where the attempt's recorded usage came from; empty while none is recorded. */
    public Optional<UsageSource> usageSource(UUID attemptId) {
        return onConnection(connection -> {
            try (PreparedStatement select =
                    connection.prepareStatement("SELECT source FROM usage_record WHERE attempt_id = ?")) {
                select.setObject(1, attemptId);
                try (ResultSet row = select.executeQuery()) {
                    return row.next() ? Optional.of(UsageSource.fromWireName(row.getString(1))) : Optional.empty();
                }
            }
        });
    }

    /** Whether an attempt of the job other than {@code own} is still open (may produce a result). */
    public boolean anotherAttemptOpen(UUID jobId, UUID own) {
        return onConnection(connection -> {
            try (PreparedStatement select = connection.prepareStatement(
                    "SELECT EXISTS (SELECT 1 FROM attempt WHERE job_id = ? AND id <> ? AND state = ANY(?))")) {
                select.setObject(1, jobId);
                select.setObject(2, own);
                select.setArray(3, connection.createArrayOf("text", OPEN_STATES));
                try (ResultSet row = select.executeQuery()) {
                    row.next();
                    return row.getBoolean(1);
                }
            }
        });
    }

    /** Whether the provider's report of what the attempt spent is recorded (rule 4's "paid for"). */
    public boolean usageReported(UUID attemptId) {
        return usageSource(attemptId)
                .filter(source -> source == UsageSource.PROVIDER_REPORTED)
                .isPresent();
    }

    /**
     * Drops a stored output larger than the bound; returns its size when dropped, else 0. A loser's
     * step makes it, in a plain transaction as often as not.
     */
    public long dropOversizedOutput(UUID attemptId, int maxBytes) {
        return onConnection(connection -> {
            try (PreparedStatement delete = connection.prepareStatement(
                    "DELETE FROM generation WHERE attempt_id = ? AND octet_length(patch) > ?"
                            + " RETURNING octet_length(patch)")) {
                delete.setObject(1, attemptId);
                delete.setInt(2, maxBytes);
                try (ResultSet dropped = delete.executeQuery()) {
                    return dropped.next() ? dropped.getLong(1) : 0L;
                }
            }
        });
    }

    /**
     * Records what the provider reported it spent, or that it reported nothing; once per attempt.
     *
     * @return true when this call recorded it, false when the attempt's usage was recorded already
     */
    public boolean recordUsage(
            UUID attemptId, String ownerId, String provider, ProviderOutcome.Usage usage, Instant now) {
        return onConnection(connection -> {
            try (PreparedStatement insert = connection.prepareStatement(INSERT_USAGE)) {
                bindUsage(insert, 1, attemptId, ownerId, provider, usage, now);
                return insert.executeUpdate() == 1;
            }
        });
    }

    /** Binds {@link #INSERT_USAGE}'s seven parameters from {@code first} on. */
    private static void bindUsage(
            PreparedStatement insert,
            int first,
            UUID attemptId,
            String ownerId,
            String provider,
            ProviderOutcome.Usage usage,
            Instant now)
            throws SQLException {
        insert.setObject(first, attemptId);
        insert.setString(first + 1, ownerId);
        insert.setString(first + 2, provider);
        insert.setObject(first + 3, usage == null ? null : usage.promptTokens(), Types.INTEGER);
        insert.setObject(first + 4, usage == null ? null : usage.completionTokens(), Types.INTEGER);
        insert.setString(first + 5, usage == null ? "unknown" : "provider_reported");
        insert.setObject(first + 6, timestamp(now));
    }

    /**
     * What the attempt's reported usage cost at its claim's price, as the settlement trigger wrote it
     * (rule 20); empty while no usage is recorded or when no price was in force.
     */
    public Optional<BigDecimal> cost(UUID attemptId) {
        return onConnection(connection -> {
            try (PreparedStatement select = connection.prepareStatement("SELECT cost_usd FROM attempt WHERE id = ?")) {
                select.setObject(1, attemptId);
                try (ResultSet cost = select.executeQuery()) {
                    return cost.next() ? Optional.ofNullable(cost.getBigDecimal(1)) : Optional.empty();
                }
            }
        });
    }

    /**
     * Reserves the apply key. {@code ON CONFLICT DO NOTHING}: false means the key was there already,
     * i.e. this result was applied or is being applied.
     */
    public boolean reserveApply(ApplyKey key, UUID jobId, UUID attemptId, String scope, Instant now) {
        return onConnection(connection -> {
            try (PreparedStatement insert = connection.prepareStatement(
                    "INSERT INTO applied_patch (idem_key, job_id, attempt_id, scope, status, created_at)"
                            + " VALUES (?, ?, ?, ?, 'pending', ?) ON CONFLICT (idem_key) DO NOTHING")) {
                insert.setString(1, key.value());
                insert.setObject(2, jobId);
                insert.setObject(3, attemptId);
                insert.setString(4, scope);
                insert.setObject(5, timestamp(now));
                return insert.executeUpdate() == 1;
            }
        });
    }

    /**
     * Reserves the apply key and records it applied, in one statement, for an apply in the database
     * made in this same transaction: false when the key was reserved before, and nothing was written.
     */
    public boolean reserveApplied(
            ApplyKey key, UUID jobId, UUID attemptId, String scope, String targetRef, Instant now) {
        return onConnection(connection -> {
            try (PreparedStatement insert = connection.prepareStatement("INSERT INTO applied_patch"
                    + " (idem_key, job_id, attempt_id, scope, status, target_ref, created_at, applied_at)"
                    + " VALUES (?, ?, ?, ?, 'applied', ?, ?, ?) ON CONFLICT (idem_key) DO NOTHING")) {
                insert.setString(1, key.value());
                insert.setObject(2, jobId);
                insert.setObject(3, attemptId);
                insert.setString(4, scope);
                insert.setString(5, targetRef);
                insert.setObject(6, timestamp(now));
                insert.setObject(7, timestamp(now));
                return insert.executeUpdate() == 1;
            }
        });
    }

    /** The status of a reserved apply key: 'pending' (outcome unknown) or 'applied'. */
    public Optional<String> applyStatus(ApplyKey key) {
        return onConnection(connection -> {
            try (PreparedStatement select =
                    connection.prepareStatement("SELECT status FROM applied_patch WHERE idem_key = ?")) {
                select.setString(1, key.value());
                try (ResultSet status = select.executeQuery()) {
                    return status.next() ? Optional.of(status.getString(1)) : Optional.empty();
                }
            }
        });
    }

    /** Removes the reservation of an apply the target refused: nothing was applied under this key. */
    public void releaseRefusedApply(ApplyKey key) {
        onConnection(connection -> {
            try (PreparedStatement delete = connection.prepareStatement(
                    "DELETE FROM applied_patch WHERE idem_key = ? AND status = 'pending'")) {
                delete.setString(1, key.value());
                return delete.executeUpdate();
            }
        });
    }

    /**
     * Puts a failed apply of the job back by an exponential backoff (from {@code base}, at most
     * {@code max}), so the sweep takes it again then, the jobs tried least recently first.
     *
     * @return how many applies of the job have failed so far
     */
    public int deferApply(UUID jobId, Duration base, Duration max) {
        return onConnection(connection -> {
            try (PreparedStatement update = connection.prepareStatement(
                    "UPDATE job SET apply_failures = apply_failures + 1, apply_retry_at = statement_timestamp()"
                            + " + least(? * power(2, least(apply_failures, 20)), ?) * interval '1 millisecond'"
                            + " WHERE id = ? RETURNING apply_failures")) {
                update.setLong(1, base.toMillis());
                update.setLong(2, max.toMillis());
                update.setObject(3, jobId);
                try (ResultSet failures = update.executeQuery()) {
                    return failures.next() ? failures.getInt(1) : 0;
                }
            }
        });
    }

    public void markApplied(ApplyKey key, String targetRef, Instant now) {
        onConnection(connection -> {
            try (PreparedStatement update = connection.prepareStatement(
                    "UPDATE applied_patch SET status = 'applied', target_ref = ?, applied_at = ?"
                            + " WHERE idem_key = ? AND status = 'pending'")) {
                update.setString(1, targetRef);
                update.setObject(2, timestamp(now));
                update.setString(3, key.value());
                return update.executeUpdate();
            }
        });
    }

    /**
     * Runs {@code work} on the connection of the step's transaction, plain or JTA, without flushing
     * the session first.
     */
    private <T> T onConnection(SqlWork<T> work) {
        return transaction.onConnection(work);
    }

    private static OffsetDateTime timestamp(Instant instant) {
        return OffsetDateTime.ofInstant(instant, ZoneOffset.UTC);
    }
}
