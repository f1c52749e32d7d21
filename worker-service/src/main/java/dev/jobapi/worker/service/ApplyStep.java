package dev.jobapi.worker.service;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jobapi.common.apply.ApplyKey;
import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.job.Job;
import dev.jobapi.common.job.JobEventKind;
import dev.jobapi.common.job.JobEvents;
import dev.jobapi.common.job.JobState;
import dev.jobapi.common.tracing.TraceAttributes;
import dev.jobapi.common.tracing.Tracing;
import dev.jobapi.worker.apply.Applier;
import dev.jobapi.worker.apply.ApplyRefused;
import dev.jobapi.worker.apply.ApplyTarget;
import dev.jobapi.worker.config.WorkerConfig;
import dev.jobapi.worker.repository.AttemptWork;
import dev.jobapi.worker.service.AttemptSteps.Loaded;
import io.opentelemetry.api.trace.Span;
import jakarta.inject.Singleton;
import java.util.Optional;
import org.jboss.logging.Logger;

/**
 * Exactly-once apply (rule 7). The key, derived from what is applied, is reserved in applied_patch
 * first; a key that exists already means applied (success) or pending (outcome unknown: the target
 * is asked first). An apply to our own database commits with its reservation and the job's
 * completion in one step; an apply to a git repository is reserve, commit, mark applied. Its parts
 * are functions of the loaded attempt, and {@link #make} of none: {@link AttemptPipeline} orders
 * them and opens the transactions.
 */
@Singleton
public class ApplyStep {

    /** Failed applies of one job after which it waits in review (still retried) with the reason. */
    static final int FAILURES_BEFORE_REVIEW = 3;

    private static final Logger LOG = Logger.getLogger(ApplyStep.class);

    static final String APPLY_SPAN = "attempt.apply";

    /** A reserved apply still to be made on a target outside the database. */
    public record Plan(ApplyKey key, ApplyTarget target, String scope, byte[] patch, boolean alreadyApplied) {}

    private final AttemptWork work;
    private final Applier applier;
    private final ApplyKeys applyKeys;
    private final JobEvents events;
    private final WorkerMetrics metrics;
    private final WorkerConfig config;
    private final ObjectMapper mapper;
    private final Tracing tracing;

    ApplyStep(
            AttemptWork work,
            Applier applier,
            ApplyKeys applyKeys,
            JobEvents events,
            WorkerMetrics metrics,
            WorkerConfig config,
            ObjectMapper mapper,
            Tracing tracing) {
        this.tracing = tracing;
        this.work = work;
        this.applier = applier;
        this.applyKeys = applyKeys;
        this.events = events;
        this.metrics = metrics;
        this.config = config;
        this.mapper = mapper;
    }

    /**
     * Inside a step, for the job's winner: reserves the apply key. An apply to the database is made
     * and the job completed right here.
     *
     * @return what is left to apply on a target outside the database, or null when nothing is
     */
    Plan reserve(Loaded step) {
        Attempt attempt = step.attempt();
        Job job = step.job();
        if (!attempt.id().equals(job.winningAttemptId()) || job.state().isTerminal()) {
            return null;
        }
        // The reservation is a row of its own, which no version of the job guards: the step's commit
        // checks the job's version, so a delivery that loaded the winner before another delivery's
        // refused apply released it runs again and reserves nothing (CI's soak at 7fbe095: a pending
        // apply was left to an attempt that no longer won).
        step.checkJobAtCommit();
        byte[] patch = step.storedPatch()
                .orElseGet(() -> work.storedOutput(attempt.id()).orElseThrow().patch());
        ApplyTarget target = new ApplyTarget(job.id(), attempt.id(), baseRef(job));
        String scope = applier.scope(target);
        ApplyKey key = applyKeys.keyFor(job.id(), patch, scope);
        if (applier.appliesInTheDatabase()) {
            applyInTheDatabase(step, key, scope, patch, target);
            return null;
        }
        boolean reserved = work.reserveApply(key, job.id(), attempt.id(), scope, step.now());
        boolean applied =
                !reserved && work.applyStatus(key).filter("applied"::equals).isPresent();
        events.record(
                job.id(),
                attempt.id(),
                reserved ? JobEventKind.APPLY_RESERVED : JobEventKind.APPLY_KEY_EXISTS,
                "key " + key + (reserved ? ", scope " + scope : applied ? ", already applied" : ", outcome unknown"));
        return new Plan(key, target, scope, patch, applied);
    }

    /**
     * An apply to the database, in the step's transaction: the key is reserved and recorded applied
     * by one statement, since no other transaction could ever see it pending. Its timeline says
     * apply.done with the key: a reservation of its own would say nothing more (issue 33: only rows
     * a person reads). A key reserved before is a duplicate prevented when it is applied, else a
     * pending reservation, which this apply marks applied.
     */
    private void applyInTheDatabase(Loaded step, ApplyKey key, String scope, byte[] patch, ApplyTarget target) {
        Job job = step.job();
        Attempt attempt = step.attempt();
        tracing.runInSpan(APPLY_SPAN, job.id(), attempt.id(), () -> {
            describe(Span.current(), key, scope);
            String targetRef = applier.apply(key, patch, target);
            if (work.reserveApplied(key, job.id(), attempt.id(), scope, targetRef, step.now())) {
                events.record(job.id(), attempt.id(), JobEventKind.APPLY_DONE, "key " + key + ", target " + targetRef);
                return;
            }
            boolean applied = work.applyStatus(key).filter("applied"::equals).isPresent();
            events.record(
                    job.id(),
                    attempt.id(),
                    JobEventKind.APPLY_KEY_EXISTS,
                    "key " + key + (applied ? ", already applied" : ", outcome unknown"));
            if (applied) {
                step.afterCommit(metrics::duplicateApplyPrevented);
            } else {
                markApplied(step, key, targetRef, false);
            }
        });
        complete(step);
    }

    static void describe(Span span, ApplyKey key, String scope) {
        span.setAttribute(TraceAttributes.APPLY_TARGET, scope);
        span.setAttribute(TraceAttributes.APPLY_KEY, key.toString());
    }

    /** What the apply on the target came to: the target's reference, or null when it was made before. */
    public record Made(String targetRef, boolean foundOnTarget) {}

    /**
     * Outside any transaction: makes a reserved apply on its target, asking the target first, so a
     * resumed apply that finished changes nothing.
     *
     * @throws ApplyRefused when the target refuses the patch for good
     * @throws RuntimeException when the target cannot take it now
     */
    Made make(Plan plan) {
        if (plan.alreadyApplied()) {
            metrics.duplicateApplyPrevented();
            return new Made(null, false);
        }
        Optional<String> earlier = applier.findApplied(plan.key(), plan.target());
        if (earlier.isPresent()) {
            metrics.duplicateApplyPrevented();
            return new Made(earlier.get(), true);
        }
        return new Made(applier.apply(plan.key(), plan.patch(), plan.target()), false);
    }

    /** Inside a step, after {@link #make}: marks the apply made and completes the job. */
    Void finish(Loaded step, Plan plan, Made made) {
        if (made.targetRef() != null) {
            markApplied(step, plan.key(), made.targetRef(), made.foundOnTarget());
        }
        complete(step);
        return null;
    }

    /**
     * The target could not take the apply now (a branch lock held, an I/O error). That is not the
     * message's fault: it is not counted towards dead-lettering (the message is done), and the
     * sweep resumes the apply after a backoff, the jobs tried least recently first. From the
     * {@link #FAILURES_BEFORE_REVIEW}th failure on the job says so, in review, and is still retried.
     */
    Void defer(Loaded step, RuntimeException failure) {
        Job job = step.job();
        if (!step.attempt().id().equals(job.winningAttemptId()) || job.state().isTerminal()) {
            return null;
        }
        step.lockJob(); // the backoff is written past the job's version: the lock checks it first
        var sweep = config.reconciler();
        int failures = work.deferApply(job.id(), sweep.interval(), sweep.applyRetryMax());
        LOG.warnf(
                "Apply of attempt %s failed (%d so far), the sweep retries it: %s",
                step.attempt().id(), failures, failure);
        events.record(
                job.id(), step.attempt().id(), JobEventKind.APPLY_DEFERRED, "failure " + failures + ": " + failure);
        if (failures >= FAILURES_BEFORE_REVIEW && job.state() != JobState.NEEDS_REVIEW) {
            job.requireReview(
                    "the apply of attempt " + step.attempt().id() + " has failed " + failures + " times (last: "
                            + failure + "); it is retried with backoff until the target takes it",
                    step.now());
            events.record(job.id(), step.attempt().id(), JobEventKind.JOB_NEEDS_REVIEW, job.reviewReason());
        }
        return null;
    }

    private void markApplied(Loaded step, ApplyKey key, String targetRef, boolean foundOnTarget) {
        work.markApplied(key, targetRef, step.now());
        events.record(
                step.job().id(),
                step.attempt().id(),
                foundOnTarget ? JobEventKind.APPLY_FOUND_ON_TARGET : JobEventKind.APPLY_DONE,
                "key " + key + ", target " + targetRef);
    }

    private void complete(Loaded step) {
        Job job = step.job();
        if (job.state() != JobState.COMPLETED) {
            job.complete(step.now());
            events.record(job.id(), step.attempt().id(), JobEventKind.JOB_COMPLETED, null);
        }
    }

    /**
     * The target refused the winner's patch for good. Trying again would change nothing, so the win
     * is released: the attempt fails with the target's reason, its apply reservation goes (nothing
     * was applied under it), and the job waits for its owner to ask for another attempt or cancel.
     */
    Void refuse(Loaded step, ApplyKey key, String reason) {
        Attempt attempt = step.attempt();
        Job job = step.job();
        if (!attempt.id().equals(job.winningAttemptId()) || job.state().isTerminal()) {
            return null;
        }
        String stated = "apply refused by the target: " + reason;
        work.releaseRefusedApply(key);
        attempt.failApply(stated, step.now());
        job.releaseRefusedWinner("attempt " + attempt.id() + ": " + stated, step.now());
        step.afterCommit(() -> metrics.attemptOutcome(attempt.provider(), "apply_refused"));
        events.record(job.id(), attempt.id(), JobEventKind.APPLY_REFUSED, reason);
        events.record(job.id(), attempt.id(), JobEventKind.JOB_NEEDS_REVIEW, stated);
        return null;
    }

    private String baseRef(Job job) {
        return JobInputFields.text(
                mapper, job.id(), job.input(), "baseRef", config.apply().git().defaultBaseRef());
    }
}
