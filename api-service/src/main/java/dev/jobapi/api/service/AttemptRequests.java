package dev.jobapi.api.service;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.security.Caller;
import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.attempt.AttemptRepository;
import dev.jobapi.common.audit.AuditTrail;
import dev.jobapi.common.fallback.KillSwitch;
import dev.jobapi.common.job.Job;
import dev.jobapi.common.job.JobEvents;
import dev.jobapi.common.message.OutboxWriter;
import dev.jobapi.common.tracing.Tracing;
import io.opentelemetry.api.trace.Span;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.transaction.Transactional;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * New attempts of an existing job (docs/design.md, rule 2): state transitions, never new jobs. The
 * job row is locked for the decision, so two concurrent requests cannot both pass the open-attempt
 * guard.
 */
@ApplicationScoped
public class AttemptRequests {

    private final JobAccess access;
    private final AttemptRepository attempts;
    private final OutboxWriter outbox;
    private final Providers providers;
    private final FallbackSwitch fallbackSwitch;
    private final JobEvents events;
    private final AuditTrail audit;
    private final Budgets budgets;
    private final Clock clock;

    AttemptRequests(
            JobAccess access,
            AttemptRepository attempts,
            OutboxWriter outbox,
            Providers providers,
            FallbackSwitch fallbackSwitch,
            JobEvents events,
            AuditTrail audit,
            Budgets budgets,
            Clock clock) {
        this.access = access;
        this.attempts = attempts;
        this.outbox = outbox;
        this.providers = providers;
        this.fallbackSwitch = fallbackSwitch;
        this.events = events;
        this.audit = audit;
        this.budgets = budgets;
        this.clock = clock;
    }

    /**
     * Requests a new attempt, superseding the open ones when a reviewer gives a reason.
     *
     * @param supersedeReason null unless the caller asked to supersede (role already checked here)
     */
    @Transactional
    public Replayable<Attempt> request(
            Caller caller,
            UUID jobId,
            String idempotencyKey,
            String requestedProvider,
            String supersedeReason,
            String requestDigest) {
        Job job = access.lockVisible(caller, jobId);
        var earlier = attempts.findByJobAndKey(jobId, idempotencyKey);
        if (earlier.isPresent()) {
            if (!requestDigest.equals(earlier.get().requestDigest())) {
                throw new ProblemException(
                        Problem.IDEMPOTENCY_KEY_REUSED,
                        "Attempt " + earlier.get().id() + " was requested with this key and a different body.");
            }
            events.recordAtMostOncePer(
                    JobEvents.REPLAY_WINDOW,
                    jobId,
                    earlier.get().id(),
                    "attempt.replayed",
                    "Idempotency-Key " + idempotencyKey);
            return new Replayable<>(earlier.get(), false);
        }
        if (supersedeReason != null && !caller.isReviewer()) {
            throw new ProblemException(Problem.FORBIDDEN, "Only a reviewer may supersede attempts.");
        }
        if (job.state().isTerminal() || job.winningAttemptId() != null) {
            throw new ProblemException(
                    Problem.JOB_CLOSED,
                    "Job " + jobId + " is " + job.state().wireName() + "; it takes no new attempts.");
        }
        KillSwitch.State fallback = fallbackSwitch.state();
        if (!fallback.enabled()) {
            throw new ProblemException(
                    Problem.FALLBACK_DISABLED,
                    "New attempts are switched off by " + fallback.setBy() + ": " + fallback.reason());
        }
        budgets.requireRoomFor(job.ownerId());
        String provider = providers.resolve(requestedProvider);
        Instant now = clock.instant();
        List<Attempt> open = attempts.forJobLocked(jobId).stream()
                .filter(a -> a.state().isOpen())
                .toList();
        if (!open.isEmpty()) {
            if (supersedeReason == null) {
                throw new ProblemException(
                        Problem.REVIEW_REQUIRED,
                        "Attempt(s) " + describe(open) + " may still produce a result; a reviewer must supersede"
                                + " them with a reason before another provider is tried.");
            }
            for (Attempt superseded : open) {
                superseded.supersede(supersedeReason, caller.subject(), now);
                events.record(
                        jobId,
                        superseded.id(),
                        "attempt.superseded",
                        supersedeReason + " (by " + caller.subject() + ")");
                audit.record(caller.subject(), "attempt.supersede", supersedeReason, jobId, superseded.id(), null);
            }
        }
        job.resumeAfterReview(now);
        Attempt attempt = Attempt.starting(jobId, provider, idempotencyKey, requestDigest, now);
        attempts.persist(attempt);
        outbox.announce(attempt);
        Tracing.name(Span.current(), jobId, attempt.id());
        events.record(jobId, attempt.id(), "attempt.requested", "provider " + provider + " by " + caller.subject());
        return new Replayable<>(attempt, true);
    }

    private static String describe(List<Attempt> open) {
        return open.stream()
                .map(a -> a.id() + " (" + a.state().wireName() + ")")
                .collect(Collectors.joining(", "));
    }
}
