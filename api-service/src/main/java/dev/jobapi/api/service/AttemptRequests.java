package dev.jobapi.api.service;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.security.Caller;
import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.attempt.AttemptRepository;
import dev.jobapi.common.audit.AuditTrail;
import dev.jobapi.common.job.Job;
import dev.jobapi.common.job.JobEvents;
import dev.jobapi.common.start.AttemptStarts;
import dev.jobapi.common.start.StartRefusal;
import dev.jobapi.common.tracing.Tracing;
import io.opentelemetry.api.trace.Span;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.transaction.Transactional;
import java.time.Clock;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;

/**
 * New attempts of an existing job (docs/design.md, rule 2): state transitions, never new jobs. The
 * job row is locked for the decision, so two concurrent requests cannot both pass the open-attempt
 * guard.
 */
@ApplicationScoped
public class AttemptRequests {

    private final JobAccess access;
    private final AttemptRepository attempts;
    private final Providers providers;
    private final AttemptStarts starts;
    private final JobEvents events;
    private final AuditTrail audit;
    private final Clock clock;

    AttemptRequests(
            JobAccess access,
            AttemptRepository attempts,
            Providers providers,
            AttemptStarts starts,
            JobEvents events,
            AuditTrail audit,
            Clock clock) {
        this.access = access;
        this.attempts = attempts;
        this.providers = providers;
        this.starts = starts;
        this.events = events;
        this.audit = audit;
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
        // The job is locked: the open attempts read here cannot change before this transaction ends.
        Optional<StartRefusal> refusal = starts.refusal(job, attempts.forJobLocked(jobId));
        if (refusal.isPresent() && !(refusal.get() instanceof StartRefusal.AttemptsOpen)) {
            throw StartRefusals.problem(refusal.get());
        }
        String provider = providers.resolve(requestedProvider);
        Instant now = clock.instant();
        if (refusal.isPresent()) {
            if (supersedeReason == null) {
                throw StartRefusals.problem(refusal.get());
            }
            StartRefusal.AttemptsOpen open = (StartRefusal.AttemptsOpen) refusal.get();
            for (Attempt superseded : open.open()) {
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
        Attempt attempt = starts.start(jobId, provider, idempotencyKey, requestDigest, now);
        Tracing.name(Span.current(), jobId, attempt.id());
        events.record(jobId, attempt.id(), "attempt.requested", "provider " + provider + " by " + caller.subject());
        return new Replayable<>(attempt, true);
    }
}
