package dev.jobapi.api.service;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.security.Caller;
import dev.jobapi.common.audit.AuditTrail;
import dev.jobapi.common.job.Job;
import dev.jobapi.common.job.JobEventKind;
import dev.jobapi.common.job.JobEvents;
import dev.jobapi.common.job.JobState;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.transaction.Transactional;
import java.time.Clock;
import java.util.UUID;

/**
 * Cancels a job. Once a winner is elected its apply is under way, so cancel is refused from then on;
 * before that, cancel and election race on the job's version and exactly one of them wins.
 */
@ApplicationScoped
public class JobCancellation {

    private final JobAccess access;
    private final JobEvents events;
    private final AuditTrail audit;
    private final Clock clock;

    JobCancellation(JobAccess access, JobEvents events, AuditTrail audit, Clock clock) {
        this.access = access;
        this.events = events;
        this.audit = audit;
        this.clock = clock;
    }

    /**
     * Idempotent: cancelling a cancelled job returns it unchanged. A reviewer or operator cancelling
     * another owner's job is audited with the cancel, in its transaction.
     */
    @Transactional
    public Job cancel(Caller caller, UUID jobId) {
        return cancel(caller, jobId, null, null);
    }

    /**
     * Like {@link #cancel(Caller, UUID)}; a cancel that names its context (an operator's bulk action)
     * is audited whoever owns the job, with the operator's reason.
     *
     * @param reason the operator's reason, audited; null for none
     * @param context what the audit record names as the source (e.g. "bulk action 12"); null for none
     */
    @Transactional
    public Job cancel(Caller caller, UUID jobId, String reason, String context) {
        Job job = access.lockVisible(caller, jobId);
        if (job.state() == JobState.CANCELLED) {
            return job;
        }
        if (job.state() == JobState.COMPLETED || job.winningAttemptId() != null) {
            throw new ProblemException(
                    Problem.JOB_CLOSED, "Job " + jobId + " already has a result; it can no longer be cancelled.");
        }
        job.cancel(clock.instant());
        events.record(jobId, null, JobEventKind.JOB_CANCELLED, "by " + caller.subject());
        if (context != null || !caller.subject().equals(job.ownerId())) {
            audit.record(
                    caller.subject(),
                    "job.cancel",
                    reason,
                    jobId,
                    null,
                    "owner " + job.ownerId() + (context == null ? "" : "; " + context));
        }
        return job;
    }
}
