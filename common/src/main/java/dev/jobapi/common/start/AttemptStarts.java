package dev.jobapi.common.start;

import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.attempt.AttemptRepository;
import dev.jobapi.common.budget.DailyBudgets;
import dev.jobapi.common.budget.SpendBudgets;
import dev.jobapi.common.database.SqlWork;
import dev.jobapi.common.fallback.KillSwitch;
import dev.jobapi.common.job.Job;
import dev.jobapi.common.message.OutboxWriter;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.hibernate.Session;

/**
 * The one policy for starting an attempt (docs/design.md, rules 2, 11 and 12), used by the API's
 * intake and attempt requests and by the worker's automatic fallback: whether a new attempt may
 * start, and how it starts (the attempt and its outbox row, in the caller's transaction). Callers
 * keep their own answers to a refusal and their own timeline events.
 */
@ApplicationScoped
public class AttemptStarts {

    private final EntityManager em;
    private final AttemptRepository attempts;
    private final OutboxWriter outbox;
    private final KillSwitch killSwitch;
    private final DailyBudgets budgets;
    private final SpendBudgets spend;
    private final AttemptLimits limits;
    private final Clock clock;

    AttemptStarts(
            EntityManager em,
            AttemptRepository attempts,
            OutboxWriter outbox,
            KillSwitch killSwitch,
            DailyBudgets budgets,
            SpendBudgets spend,
            AttemptLimits limits,
            Clock clock) {
        this.em = em;
        this.attempts = attempts;
        this.outbox = outbox;
        this.killSwitch = killSwitch;
        this.budgets = budgets;
        this.spend = spend;
        this.limits = limits;
        this.clock = clock;
    }

    /**
     * Why no new attempt of this existing job may start now, in the order a caller reports them: the
     * job closed, the kill switch off, the job's attempts at their bound, the owner's budget (tokens,
     * or money of every provider) spent, attempts still open. Empty when one may. The new attempt's
     * provider is not asked here: a caller that knows it asks {@link #refusalAt} too. The API's job
     * representation asks it too, so it offers no button the API would refuse.
     * A decision calls it with the job row locked, in the transaction that starts the attempt: the
     * switch is read {@code FOR SHARE} there, so a flip waits for this decision to commit.
     *
     * @param jobAttempts every attempt of the job, as the caller loaded (or locked) them
     */
    @Transactional
    public Optional<StartRefusal> refusal(Job job, List<Attempt> jobAttempts) {
        if (job.state().isTerminal() || job.winningAttemptId() != null) {
            return Optional.of(new StartRefusal.JobClosed(job.id(), job.state(), job.winningAttemptId()));
        }
        KillSwitch.State position = killSwitch.state();
        if (!position.enabled()) {
            return Optional.of(new StartRefusal.SwitchedOff(position));
        }
        if (jobAttempts.size() >= limits.perJob()) {
            return Optional.of(new StartRefusal.AttemptLimitReached(job.id(), jobAttempts.size(), limits.perJob()));
        }
        Optional<StartRefusal> budget = refusalAt(job.ownerId(), null);
        if (budget.isPresent()) {
            return budget;
        }
        List<Attempt> open =
                jobAttempts.stream().filter(a -> a.state().isOpen()).toList();
        return open.isEmpty() ? Optional.empty() : Optional.of(new StartRefusal.AttemptsOpen(open));
    }

    /**
     * Why an attempt of the owner's at {@code provider} may not start for the owner's budgets: tokens,
     * or money of every provider or of {@code provider} (null: only those of every provider). A new
     * attempt of an existing job asks it once its provider is known, after {@link #refusal}.
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public Optional<StartRefusal> refusalAt(String ownerId, String provider) {
        return em.unwrap(Session.class)
                .doReturningWork(connection -> budgetRefusal(
                        connection, ownerId, c -> spend.standings(c, ownerId, provider, clock.instant())));
    }

    /**
     * The same for a new job's first attempt, on intake's connection, from the budgets an operator set
     * for the owner as intake's own statement read them ({@link SpendBudgets#SET_BUDGETS}). A new job
     * asks only this: the kill switch stops fallbacks, new attempts of existing jobs, not new jobs, and
     * a new job has nothing open. No statement at all when no budget holds the call.
     */
    public Optional<StartRefusal> refusalOfFirstAttempt(
            Connection connection, String ownerId, String provider, List<SpendBudgets.SetBudget> setBudgets)
            throws SQLException {
        return budgetRefusal(
                connection, ownerId, c -> spend.standings(c, ownerId, provider, clock.instant(), setBudgets));
    }

    /**
     * Starts an attempt: a {@code starting} row and its outbox row, committed together or not at all
     * (rule 3). Call only after {@link #refusal} said yes in the same transaction. A job's first attempt
     * is not started here: intake's own statement writes it, after {@link #refusalOfFirstAttempt}.
     *
     * @param idempotencyKey the request's key, scoped to the job; null for a job's first attempt
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public Attempt start(UUID jobId, String provider, String idempotencyKey, String requestDigest, Instant now) {
        Attempt attempt = Attempt.starting(jobId, provider, idempotencyKey, requestDigest, now);
        attempts.persist(attempt);
        outbox.announce(attempt);
        return attempt;
    }

    /**
     * Starts an attempt under a request's Idempotency-Key, at most once per (job, key): the insert is
     * {@code INSERT ... ON CONFLICT (job_id, idempotency_key) DO NOTHING RETURNING id} on the
     * constraint {@code attempt_job_idempotency_key_unique}, and its outbox row follows only when a row
     * came back (rule 3). Empty when the key already made an attempt of this job, which the caller
     * answers as a replay: nothing else was written.
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public Optional<Attempt> startOnce(
            UUID jobId, String provider, String idempotencyKey, String requestDigest, Instant now) {
        Attempt attempt = Attempt.starting(jobId, provider, idempotencyKey, requestDigest, now);
        List<?> inserted = em.createNativeQuery("INSERT INTO attempt (id, job_id, idempotency_key, request_digest,"
                        + " provider, state, request_key, version, created_at, updated_at)"
                        + " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0, ?8, ?8)"
                        + " ON CONFLICT (job_id, idempotency_key) DO NOTHING RETURNING id")
                .setParameter(1, attempt.id())
                .setParameter(2, jobId)
                .setParameter(3, idempotencyKey)
                .setParameter(4, requestDigest)
                .setParameter(5, provider)
                .setParameter(6, attempt.state().wireName())
                .setParameter(7, attempt.requestKey())
                .setParameter(8, now)
                .getResultList();
        if (inserted.isEmpty()) {
            // Zero rows: this key made an attempt of this job before; nothing is announced twice.
            return Optional.empty();
        }
        Attempt stored = em.find(Attempt.class, attempt.id());
        outbox.announce(stored);
        return Optional.of(stored);
    }

    /**
     * The owner's token budget spent today, or one of the money budgets that hold the call ({@code
     * standings}, read only when the token budget let the call through) with nothing left (spent and
     * reserved fill it). The claim's reservation is what keeps a money budget (rule 20); this answers
     * early, with the figures, what the claim would refuse.
     */
    private Optional<StartRefusal> budgetRefusal(
            Connection connection, String ownerId, SqlWork<List<SpendBudgets.Standing>> standings) throws SQLException {
        Optional<StartRefusal> tokens =
                budgets.spent(connection, ownerId).map(spent -> new StartRefusal.BudgetSpent(ownerId, spent));
        if (tokens.isPresent()) {
            return tokens;
        }
        return standings.on(connection).stream()
                .filter(standing -> standing.remainingUsd().signum() == 0)
                .findFirst()
                .map(full -> new StartRefusal.SpendBudgetFull(ownerId, full));
    }
}
