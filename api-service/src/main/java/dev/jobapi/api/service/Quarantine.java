package dev.jobapi.api.service;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.security.Caller;
import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.attempt.AttemptRepository;
import dev.jobapi.common.attempt.AttemptState;
import dev.jobapi.common.attempt.UsageRecord;
import dev.jobapi.common.audit.AuditTrail;
import dev.jobapi.common.job.Job;
import dev.jobapi.common.job.JobEventKind;
import dev.jobapi.common.job.JobEvents;
import dev.jobapi.common.job.JobRepository;
import dev.jobapi.common.message.OutboxWriter;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.persistence.LockModeType;
import jakarta.transaction.Transactional;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * Attempts held because the provider reported no usage (docs/design.md, rule 9). An operator
 * records the reconciled usage (the attempt then goes to the election through the worker, like any
 * result) or fails it; either way with a reason, audited.
 */
@ApplicationScoped
public class Quarantine {

    private final EntityManager em;
    private final JobRepository jobs;
    private final AttemptRepository attempts;
    private final OutboxWriter outbox;
    private final JobEvents events;
    private final AuditTrail audit;
    private final Clock clock;

    Quarantine(
            EntityManager em,
            JobRepository jobs,
            AttemptRepository attempts,
            OutboxWriter outbox,
            JobEvents events,
            AuditTrail audit,
            Clock clock) {
        this.em = em;
        this.jobs = jobs;
        this.attempts = attempts;
        this.outbox = outbox;
        this.events = events;
        this.audit = audit;
        this.clock = clock;
    }

    /** A held attempt with its usage row (the "unknown" one the worker wrote), if it has one. */
    public record Held(Attempt attempt, UsageRecord usage) {}

    /**
     * The {@code limit} attempts held longest, each with its usage, in one query: a queue of held
     * attempts is read in pages an operator works through, never as a whole or row by row.
     */
    @Transactional
    public List<Held> held(int limit) {
        return em.createQuery(
                        "select a, u from Attempt a left join UsageRecord u on u.attemptId = a.id"
                                + " where a.state = :state order by a.updatedAt, a.id",
                        Object[].class)
                .setParameter("state", AttemptState.QUARANTINED)
                .setMaxResults(limit)
                .getResultStream()
                .map(row -> new Held((Attempt) row[0], (UsageRecord) row[1]))
                .toList();
    }

    /** Records the usage the provider reconciled and releases the attempt to the election. */
    @Transactional
    public Attempt resolveWithUsage(
            Caller operator, UUID attemptId, int promptTokens, int completionTokens, String reason) {
        Attempt attempt = lockHeld(attemptId);
        Instant now = clock.instant();
        em.createNativeQuery("UPDATE usage_record SET prompt_tokens = ?1, completion_tokens = ?2,"
                        + " source = 'provider_reported', recorded_at = ?3 WHERE attempt_id = ?4")
                .setParameter(1, promptTokens)
                .setParameter(2, completionTokens)
                .setParameter(3, now)
                .setParameter(4, attemptId)
                .executeUpdate();
        attempt.releaseFromQuarantine(now);
        // The worker elects and applies; announce the attempt again through the outbox.
        outbox.announce(attempt);
        events.record(
                attempt.jobId(),
                attemptId,
                JobEventKind.USAGE_RECONCILED,
                promptTokens + " prompt + " + completionTokens + " completion tokens, by " + operator.subject());
        audit.record(
                operator.subject(),
                "attempt.resolve.usage",
                reason,
                attempt.jobId(),
                attemptId,
                "promptTokens=" + promptTokens + " completionTokens=" + completionTokens);
        return attempt;
    }

    /** Fails the held attempt; its output is kept and never applied. */
    @Transactional
    public Attempt resolveAsFailed(Caller operator, UUID attemptId, String reason) {
        return resolveAsFailed(operator, attemptId, reason, null);
    }

    /**
     * Like {@link #resolveAsFailed(Caller, UUID, String)}, its audit record naming the context.
     *
     * @param context what the audit record names as the source (e.g. "bulk action 12"); null for none
     */
    @Transactional
    public Attempt resolveAsFailed(Caller operator, UUID attemptId, String reason, String context) {
        Attempt attempt = lockHeld(attemptId);
        Instant now = clock.instant();
        attempt.fail("failed by operator " + operator.subject() + ": " + reason, now);
        Job job = jobs.findById(attempt.jobId());
        boolean othersOpen =
                attempts.forJob(job.id()).stream().anyMatch(a -> a.state().isOpen());
        if (!othersOpen) {
            job.awaitOwner("attempt " + attemptId + " failed by operator " + operator.subject() + ": " + reason, now);
        }
        events.record(
                attempt.jobId(),
                attemptId,
                JobEventKind.ATTEMPT_FAILED,
                "by operator " + operator.subject() + ": " + reason);
        audit.record(operator.subject(), "attempt.resolve.fail", reason, attempt.jobId(), attemptId, context);
        return attempt;
    }

    private Attempt lockHeld(UUID attemptId) {
        Attempt attempt = attempts.findByIdOptional(attemptId)
                .orElseThrow(() -> new ProblemException(Problem.NOT_FOUND, "No attempt " + attemptId + "."));
        jobs.findForUpdate(attempt.jobId());
        // Locked after the job, as every attempt the API changes: a worker's concurrent step waits.
        em.refresh(attempt, LockModeType.PESSIMISTIC_WRITE);
        if (attempt.state() != AttemptState.QUARANTINED) {
            throw new ProblemException(
                    Problem.NOT_QUARANTINED,
                    "Attempt " + attemptId + " is " + attempt.state().wireName() + " and not held.");
        }
        return attempt;
    }
}
