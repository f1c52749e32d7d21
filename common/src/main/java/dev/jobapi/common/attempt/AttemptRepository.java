package dev.jobapi.common.attempt;

import io.quarkus.hibernate.orm.panache.PanacheRepositoryBase;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.LockModeType;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Collectors;

/** Reads attempts and what belongs to them (generation, usage). */
@ApplicationScoped
public class AttemptRepository implements PanacheRepositoryBase<Attempt, UUID> {

    public List<Attempt> forJob(UUID jobId) {
        return list("jobId = ?1 order by createdAt, id", jobId);
    }

    /**
     * The job's attempts, row-locked for the rest of the transaction. The API takes these locks
     * (after the job's) before it changes an attempt, so a user's action never fails on a worker's
     * concurrent write: the worker's step waits, fails its version check and decides again.
     */
    public List<Attempt> forJobLocked(UUID jobId) {
        return find("jobId = ?1 order by createdAt, id", jobId)
                .withLock(LockModeType.PESSIMISTIC_WRITE)
                .list();
    }

    public Optional<Attempt> findByJobAndKey(UUID jobId, String idempotencyKey) {
        return find("jobId = ?1 and idempotencyKey = ?2", jobId, idempotencyKey).firstResultOptional();
    }

    public Optional<Generation> generation(UUID attemptId) {
        return Optional.ofNullable(getEntityManager().find(Generation.class, attemptId));
    }

    public Optional<UsageRecord> usage(UUID attemptId) {
        return Optional.ofNullable(getEntityManager().find(UsageRecord.class, attemptId));
    }

    /** Usage records of many attempts at once, keyed by attempt id. */
    public Map<UUID, UsageRecord> usageOfJob(UUID jobId) {
        // One scalar parameter: Hibernate caches this query's translation, unlike an IN list whose
        // size varies (the benchmark's profile showed that translation on every GET).
        return getEntityManager()
                .createQuery(
                        "from UsageRecord u where u.attemptId in (select a.id from Attempt a where a.jobId = :jobId)",
                        UsageRecord.class)
                .setParameter("jobId", jobId)
                .getResultStream()
                .collect(Collectors.toMap(UsageRecord::attemptId, u -> u));
    }
}
