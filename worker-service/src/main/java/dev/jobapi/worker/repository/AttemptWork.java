package dev.jobapi.worker.repository;

import dev.jobapi.common.apply.ApplyKey;
import dev.jobapi.worker.provider.ProviderOutcome;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * The worker's conditional and idempotent writes, as SQL: each one states the condition under which
 * it applies, and zero rows means a duplicate or a lost race, never an error.
 */
@ApplicationScoped
@Transactional(Transactional.TxType.MANDATORY)
public class AttemptWork {

    private final EntityManager em;

    AttemptWork(EntityManager em) {
        this.em = em;
    }

    /**
     * Claims a starting attempt that nobody holds, and records that its request goes out now. The
     * lease runs on the database's clock, so workers whose clocks differ agree on when it ends.
     *
     * @return false when another worker holds or held it
     */
    public boolean claim(UUID attemptId, String workerId, Instant now, Duration lease) {
        return em.createNativeQuery("UPDATE attempt SET lease_owner = ?1,"
                                + " lease_expires_at = statement_timestamp() + ?2 * interval '1 millisecond',"
                                + " sent_at = ?3, updated_at = ?3, version = version + 1"
                                + " WHERE id = ?4 AND state = 'starting' AND lease_owner IS NULL")
                        .setParameter(1, workerId)
                        .setParameter(2, lease.toMillis())
                        .setParameter(3, now)
                        .setParameter(4, attemptId)
                        .executeUpdate()
                == 1;
    }

    /** Whether the attempt's lease is still running, by the database's clock. */
    public boolean leaseLive(UUID attemptId) {
        return (Boolean) em.createNativeQuery(
                        "SELECT coalesce(lease_expires_at > statement_timestamp(), false) FROM attempt WHERE id = ?1")
                .setParameter(1, attemptId)
                .getSingleResult();
    }

    /**
     * Extends this worker's lease while its provider call is in flight (the heartbeat).
     *
     * @return false when the lease is no longer this worker's to extend: it ran out, or the attempt
     *     moved on (superseded, cancelled, marked unknown)
     */
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
    public boolean holdsLiveLease(UUID attemptId, String workerId) {
        return !em.createNativeQuery("SELECT 1 FROM attempt WHERE id = ?1 AND state = 'starting'"
                        + " AND lease_owner = ?2 AND lease_expires_at > statement_timestamp()")
                .setParameter(1, attemptId)
                .setParameter(2, workerId)
                .getResultList()
                .isEmpty();
    }

    /** Counts one failed delivery of the attempt's message and returns the count so far. */
    public int countFailedDelivery(UUID attemptId) {
        List<?> counted = em.createNativeQuery("UPDATE attempt SET failed_deliveries = failed_deliveries + 1"
                        + " WHERE id = ?1 RETURNING failed_deliveries")
                .setParameter(1, attemptId)
                .getResultList();
        return counted.isEmpty() ? 0 : ((Number) counted.get(0)).intValue();
    }

    /**
     * Announces the attempt again through the outbox (the claim is conditional: a second message is
     * harmless). The new row keeps the trace its first row kept, so the message it becomes continues
     * the trace of the request that made the attempt.
     */
    public void reannounce(UUID attemptId, UUID jobId, Instant now) {
        em.createNativeQuery("INSERT INTO outbox (attempt_id, job_id, created_at, traceparent, tracestate)"
                        + " SELECT ?1, ?2, ?3, first.traceparent, first.tracestate"
                        + " FROM (SELECT 1) one LEFT JOIN LATERAL (SELECT traceparent, tracestate FROM outbox"
                        + " WHERE attempt_id = ?1 AND traceparent IS NOT NULL ORDER BY id LIMIT 1) first ON true")
                .setParameter(1, attemptId)
                .setParameter(2, jobId)
                .setParameter(3, now)
                .executeUpdate();
    }

    /** Stores the generation once; a second store of the same attempt is a no-op. */
    public void storeGeneration(UUID attemptId, byte[] patch, String outputDigest, Instant now) {
        em.createNativeQuery("INSERT INTO generation (attempt_id, patch, output_digest, created_at)"
                        + " VALUES (?1, ?2, ?3, ?4) ON CONFLICT (attempt_id) DO NOTHING")
                .setParameter(1, attemptId)
                .setParameter(2, patch)
                .setParameter(3, outputDigest)
                .setParameter(4, now)
                .executeUpdate();
    }

    /** Drops a stored output larger than the bound; returns its size when dropped, else 0. */
    public long dropOversizedOutput(UUID attemptId, int maxBytes) {
        List<?> dropped = em.createNativeQuery(
                        "DELETE FROM generation WHERE attempt_id = ?1 AND octet_length(patch) > ?2"
                                + " RETURNING octet_length(patch)")
                .setParameter(1, attemptId)
                .setParameter(2, maxBytes)
                .getResultList();
        return dropped.isEmpty() ? 0 : ((Number) dropped.get(0)).longValue();
    }

    /** Records what the provider reported it spent, or that it reported nothing; once per attempt. */
    public void recordUsage(UUID attemptId, String ownerId, String provider, ProviderOutcome.Usage usage, Instant now) {
        em.createNativeQuery("INSERT INTO usage_record (attempt_id, owner_id, provider, prompt_tokens,"
                        + " completion_tokens, source, recorded_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
                        + " ON CONFLICT (attempt_id) DO NOTHING")
                .setParameter(1, attemptId)
                .setParameter(2, ownerId)
                .setParameter(3, provider)
                .setParameter(4, usage == null ? null : usage.promptTokens())
                .setParameter(5, usage == null ? null : usage.completionTokens())
                .setParameter(6, usage == null ? "unknown" : "provider_reported")
                .setParameter(7, now)
                .executeUpdate();
    }

    /**
     * Reserves the apply key. {@code ON CONFLICT DO NOTHING}: false means the key was there already,
     * i.e. this result was applied or is being applied.
     */
    public boolean reserveApply(ApplyKey key, UUID jobId, UUID attemptId, String scope, Instant now) {
        List<?> inserted = em.createNativeQuery(
                        "INSERT INTO applied_patch (idem_key, job_id, attempt_id, scope, status,"
                                + " created_at) VALUES (?1, ?2, ?3, ?4, 'pending', ?5)"
                                + " ON CONFLICT (idem_key) DO NOTHING RETURNING idem_key")
                .setParameter(1, key.value())
                .setParameter(2, jobId)
                .setParameter(3, attemptId)
                .setParameter(4, scope)
                .setParameter(5, now)
                .getResultList();
        return !inserted.isEmpty();
    }

    /** The status of a reserved apply key: 'pending' (outcome unknown) or 'applied'. */
    public Optional<String> applyStatus(ApplyKey key) {
        return em.createNativeQuery("SELECT status FROM applied_patch WHERE idem_key = ?1")
                .setParameter(1, key.value())
                .getResultStream()
                .findFirst()
                .map(Object::toString);
    }

    /** Removes the reservation of an apply the target refused: nothing was applied under this key. */
    public void releaseRefusedApply(ApplyKey key) {
        em.createNativeQuery("DELETE FROM applied_patch WHERE idem_key = ?1 AND status = 'pending'")
                .setParameter(1, key.value())
                .executeUpdate();
    }

    /**
     * Puts a failed apply of the job back by an exponential backoff (from {@code base}, at most
     * {@code max}), so the sweep takes it again then, the jobs tried least recently first.
     *
     * @return how many applies of the job have failed so far
     */
    public int deferApply(UUID jobId, Duration base, Duration max) {
        List<?> failures = em.createNativeQuery(
                        "UPDATE job SET apply_failures = apply_failures + 1, apply_retry_at = statement_timestamp()"
                                + " + least(?1 * power(2, least(apply_failures, 20)), ?2) * interval '1 millisecond'"
                                + " WHERE id = ?3 RETURNING apply_failures")
                .setParameter(1, base.toMillis())
                .setParameter(2, max.toMillis())
                .setParameter(3, jobId)
                .getResultList();
        return failures.isEmpty() ? 0 : ((Number) failures.get(0)).intValue();
    }

    public void markApplied(ApplyKey key, String targetRef, Instant now) {
        em.createNativeQuery("UPDATE applied_patch SET status = 'applied', target_ref = ?1, applied_at = ?2"
                        + " WHERE idem_key = ?3 AND status = 'pending'")
                .setParameter(1, targetRef)
                .setParameter(2, now)
                .setParameter(3, key.value())
                .executeUpdate();
    }
}
