package dev.jobapi.common.attempt;

import io.quarkus.hibernate.orm.panache.PanacheRepositoryBase;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.LockModeType;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

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

    /** An attempt with its usage row, null until the attempt reached a provider. */
    public record WithUsage(Attempt attempt, UsageRecord usage) {}

    /** The job's newest {@code limit} attempts, newest first, each with its usage: one query. */
    public List<WithUsage> newestOfJob(UUID jobId, int limit) {
        return getEntityManager()
                .createQuery(
                        "select a, u from Attempt a left join UsageRecord u on u.attemptId = a.id"
                                + " where a.jobId = :jobId order by a.createdAt desc, a.id desc",
                        Object[].class)
                .setParameter("jobId", jobId)
                .setMaxResults(limit)
                .getResultStream()
                .map(row -> new WithUsage((Attempt) row[0], (UsageRecord) row[1]))
                .toList();
    }

    /** The job's attempts that are still open (starting, unknown, quarantined). */
    public List<Attempt> openOfJob(UUID jobId) {
        return list(
                "jobId = ?1 and state in ?2 order by createdAt, id",
                jobId,
                Arrays.stream(AttemptState.values())
                        .filter(AttemptState::isOpen)
                        .toList());
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
}
