package dev.jobapi.worker.service;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jobapi.common.apply.ApplyKey;
import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.attempt.AttemptRepository;
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
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Optional;
import java.util.UUID;
import org.jboss.logging.Logger;

/**
 * Exactly-once apply (rule 7). The key, derived from what is applied, is reserved in applied_patch
 * first; a key that exists already means applied (success) or pending (outcome unknown: the target
 * is asked first). An apply to our own database commits with its reservation and the job's
 * completion in one step; an apply to a git repository is reserve, commit, mark applied.
 */
@ApplicationScoped
public class ApplyStep {

    /** Failed applies of one job after which it waits in review (still retried) with the reason. */
    static final int FAILURES_BEFORE_REVIEW = 3;

    private static final Logger LOG = Logger.getLogger(ApplyStep.class);

    static final String APPLY_SPAN = "attempt.apply";

    /** A reserved apply still to be made on a target outside the database. */
    public record Plan(ApplyKey key, ApplyTarget target, String scope, byte[] patch, boolean alreadyApplied) {}

    private final AttemptSteps steps;
    private final AttemptRepository attempts;
    private final AttemptWork work;
    private final Applier applier;
    private final ApplyKeys applyKeys;
    private final JobEvents events;
    private final WorkerMetrics metrics;
    private final WorkerConfig config;
    private final ObjectMapper mapper;
    private final Tracing tracing;

    ApplyStep(
            AttemptSteps steps,
            AttemptRepository attempts,
            AttemptWork work,
            Applier applier,
            ApplyKeys applyKeys,
            JobEvents events,
            WorkerMetrics metrics,
            WorkerConfig config,
            ObjectMapper mapper,
            Tracing tracing) {
        this.tracing = tracing;
        this.steps = steps;
        this.attempts = attempts;
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
        byte[] patch = step.storedPatch()
                .orElseGet(() -> attempts.generation(attempt.id()).orElseThrow().patch());
        ApplyTarget target = new ApplyTarget(job.id(), attempt.id(), baseRef(job));
        String scope = applier.scope(target);
        ApplyKey key = applyKeys.keyFor(job.id(), patch, scope);
        boolean reserved = work.reserveApply(key, job.id(), attempt.id(), scope, step.now());
        boolean applied =
                !reserved && work.applyStatus(key).filter("applied"::equals).isPresent();
        events.record(
                job.id(),
                attempt.id(),
                reserved ? JobEventKind.APPLY_RESERVED : JobEventKind.APPLY_KEY_EXISTS,
                "key " + key + (reserved ? ", scope " + scope : applied ? ", already applied" : ", outcome unknown"));
        if (!applier.appliesInTheDatabase()) {
            return new Plan(key, target, scope, patch, applied);
        }
        tracing.runInSpan(APPLY_SPAN, job.id(), attempt.id(), () -> {
            describe(Span.current(), key, scope);
            if (applied) {
                step.afterCommit(metrics::duplicateApplyPrevented);
            } else {
                markApplied(step, key, applier.apply(key, patch, target), false);
            }
        });
        complete(step);
        return null;
    }

    private static void describe(Span span, ApplyKey key, String scope) {
        span.setAttribute(TraceAttributes.APPLY_TARGET, scope);
        span.setAttribute(TraceAttributes.APPLY_KEY, key.toString());
    }

    /**
     * Outside any transaction: makes a reserved apply on its target (asking the target first, so a
     * resumed apply that finished changes nothing), then marks it applied and completes the job.
     */
    void finish(UUID attemptId, Plan plan) {
        if (plan == null) {
            return;
        }
        tracing.runInSpan(APPLY_SPAN, plan.target().jobId(), attemptId, () -> {
            describe(Span.current(), plan.key(), plan.scope());
            applyOnTarget(attemptId, plan);
        });
    }

    private void applyOnTarget(UUID attemptId, Plan plan) {
        String targetRef = null;
        boolean foundOnTarget = false;
        if (!plan.alreadyApplied()) {
            try {
                Optional<String> earlier = applier.findApplied(plan.key(), plan.target());
                foundOnTarget = earlier.isPresent();
                targetRef = earlier.orElseGet(() -> applier.apply(plan.key(), plan.patch(), plan.target()));
            } catch (ApplyRefused refused) {
                steps.run(attemptId, null, step -> refuse(step, plan.key(), refused.getMessage()));
                return;
            } catch (RuntimeException notNow) {
                steps.run(attemptId, null, step -> defer(step, notNow));
                return;
            }
        }
        if (plan.alreadyApplied() || foundOnTarget) {
            metrics.duplicateApplyPrevented();
        }
        String ref = targetRef;
        boolean found = foundOnTarget;
        steps.run(attemptId, null, step -> {
            if (ref != null) {
                markApplied(step, plan.key(), ref, found);
            }
            complete(step);
            return null;
        });
    }

    /**
     * The target could not take the apply now (a branch lock held, an I/O error). That is not the
     * message's fault: it is not counted towards dead-lettering (the message is done), and the
     * sweep resumes the apply after a backoff, the jobs tried least recently first. From the
     * {@link #FAILURES_BEFORE_REVIEW}th failure on the job says so, in review, and is still retried.
     */
    private Void defer(Loaded step, RuntimeException failure) {
        Job job = step.job();
        if (!step.attempt().id().equals(job.winningAttemptId()) || job.state().isTerminal()) {
            return null;
        }
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

    /**
     * Applies an elected winner whose apply a crash stopped with no message left to redeliver.
     */
    public void resume(UUID attemptId) {
        Plan plan;
        try {
            plan = steps.run(attemptId, null, this::reserve);
        } catch (RuntimeException notNow) {
            steps.run(attemptId, null, step -> defer(step, notNow));
            return;
        }
        finish(attemptId, plan);
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
    private Void refuse(Loaded step, ApplyKey key, String reason) {
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
        try {
            return mapper.readTree(job.input())
                    .path("baseRef")
                    .asText(config.apply().git().defaultBaseRef());
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("Stored input of job " + job.id() + " is not JSON", e);
        }
    }
}
