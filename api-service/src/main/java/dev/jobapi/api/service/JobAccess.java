package dev.jobapi.api.service;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.security.Caller;
import dev.jobapi.common.job.Job;
import dev.jobapi.common.job.JobRepository;
import jakarta.inject.Singleton;
import java.util.UUID;

/**
 * Ownership on every verb (docs/design.md, rule 10): a job the caller may not see does not exist
 * for them, so it is a 404, never a 403 that would confirm the id.
 */
@Singleton
public class JobAccess {

    private final JobRepository jobs;

    JobAccess(JobRepository jobs) {
        this.jobs = jobs;
    }

    public Job visible(Caller caller, UUID jobId) {
        return jobs.findByIdOptional(jobId)
                .filter(job -> caller.mayRead(job.ownerId()))
                .orElseThrow(() -> notFound(jobId));
    }

    /** Like {@link #visible} and locks the row for the rest of the transaction. */
    public Job lockVisible(Caller caller, UUID jobId) {
        return jobs.findForUpdate(jobId)
                .filter(job -> caller.mayRead(job.ownerId()))
                .orElseThrow(() -> notFound(jobId));
    }

    private static ProblemException notFound(UUID jobId) {
        return new ProblemException(Problem.JOB_NOT_FOUND, "No job " + jobId + " is visible to you.");
    }
}
