package dev.jobapi.api.service;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.security.Caller;
import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.attempt.AttemptRepository;
import dev.jobapi.common.audit.AuditTrail;
import dev.jobapi.common.job.Job;
import dev.jobapi.common.job.JobEventKind;
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
import java.util.function.Supplier;

/**
 * New attempts of an existing job (docs/design.md, rule 2): state transitions, never new jobs. The
 * job row is locked for the decision, so two concurrent requests cannot both pass the open-attempt
 * guard. One attempt per (job, Idempotency-Key) is the constraint attempt_job_idempotency_key_unique:
 * the attempt is inserted {@code ON CONFLICT DO NOTHING}, and no row back means a replay.
 */
@ApplicationScoped
public class AttemptRequests {

    private final JobAccess access;
    private final AttemptRepository attempts;
    private final ProviderRegistry providers;
    private final AttemptStarts starts;
    private final JobEvents events;
    private final AuditTrail audit;
    private final Clock clock;

    AttemptRequests(
            JobAccess access,
            AttemptRepository attempts,
            ProviderRegistry providers,
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
        // The job is locked: the open attempts read here cannot change before this transaction ends.
        Optional<StartRefusal> refusal = starts.refusal(job, attempts.forJobLocked(jobId));
        // Every refusal below first asks whether the key was used: a replay is answered with its
        // attempt whatever has changed since (the job closed, the switch flipped, the attempt is open).
        if (supersedeReason != null && !caller.isReviewer()) {
            return replayOr(
                    jobId,
                    idempotencyKey,
                    requestDigest,
                    () -> new ProblemException(Problem.FORBIDDEN, "Only a reviewer may supersede attempts."));
        }
        if (refusal.isPresent() && !(refusal.get() instanceof StartRefusal.AttemptsOpen)) {
            return replayOr(jobId, idempotencyKey, requestDigest, () -> StartRefusals.problem(refusal.get()));
        }
        String provider;
        try {
            provider = providers.resolve(requestedProvider);
        } catch (ProblemException unknownProvider) {
            return replayOr(jobId, idempotencyKey, requestDigest, () -> unknownProvider);
        }
        // The provider is known now: its own money budgets are asked too (those of every provider were).
        Optional<StartRefusal> providerBudget = starts.refusalAt(job.ownerId(), provider);
        if (providerBudget.isPresent()) {
            return replayOr(jobId, idempotencyKey, requestDigest, () -> StartRefusals.problem(providerBudget.get()));
        }
        if (refusal.isPresent() && supersedeReason == null) {
            return replayOr(jobId, idempotencyKey, requestDigest, () -> StartRefusals.problem(refusal.get()));
        }
        Instant now = clock.instant();
        Optional<Attempt> started = starts.startOnce(jobId, provider, idempotencyKey, requestDigest, now);
        if (started.isEmpty()) {
            // Zero rows: this key made an attempt of this job before (it has since failed or lost, or a
            // reviewer's supersession was sent again). A replay: nothing was written, nothing superseded.
            return replayOr(
                    jobId,
                    idempotencyKey,
                    requestDigest,
                    () -> new IllegalStateException(
                            "The insert of job " + jobId + "'s attempt conflicted with no row for its key"));
        }
        Attempt attempt = started.get();
        if (refusal.isPresent()) {
            for (Attempt superseded : ((StartRefusal.AttemptsOpen) refusal.get()).open()) {
                superseded.supersede(supersedeReason, caller.subject(), now);
                events.record(
                        jobId,
                        superseded.id(),
                        JobEventKind.ATTEMPT_SUPERSEDED,
                        supersedeReason + " (by " + caller.subject() + ")");
                audit.record(caller.subject(), "attempt.supersede", supersedeReason, jobId, superseded.id(), null);
            }
        }
        job.resumeAfterReview(now);
        if (!caller.subject().equals(job.ownerId())) {
            // A reviewer or operator spent another owner's budget: a privileged act, in its transaction.
            audit.record(
                    caller.subject(),
                    "attempt.request",
                    supersedeReason,
                    jobId,
                    attempt.id(),
                    "owner " + job.ownerId() + ", provider " + provider);
        }
        Tracing.name(Span.current(), jobId, attempt.id());
        events.record(
                jobId,
                attempt.id(),
                JobEventKind.ATTEMPT_REQUESTED,
                "provider " + provider + " by " + caller.subject());
        return new Replayable<>(attempt, true);
    }

    /**
     * The attempt this job's key made before, as a replay (recorded at most once a minute), or 422
     * idempotency-key-reused when it was made with another body; {@code refusal} when the key is new.
     */
    private Replayable<Attempt> replayOr(
            UUID jobId, String idempotencyKey, String requestDigest, Supplier<RuntimeException> refusal) {
        Attempt earlier = attempts.findByJobAndKey(jobId, idempotencyKey).orElseThrow(refusal);
        if (!requestDigest.equals(earlier.requestDigest())) {
            throw new ProblemException(
                    Problem.IDEMPOTENCY_KEY_REUSED,
                    "Attempt " + earlier.id() + " was requested with this key and a different body.");
        }
        events.recordAtMostOncePer(
                JobEvents.REPLAY_WINDOW,
                jobId,
                earlier.id(),
                JobEventKind.ATTEMPT_REPLAYED,
                "Idempotency-Key " + idempotencyKey);
        return new Replayable<>(earlier, false);
    }
}
