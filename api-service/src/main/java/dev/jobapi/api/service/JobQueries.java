package dev.jobapi.api.service;

import dev.jobapi.api.rest.Problem;
import dev.jobapi.api.rest.ProblemException;
import dev.jobapi.api.security.Caller;
import dev.jobapi.common.attempt.AttemptRepository;
import dev.jobapi.common.attempt.Generation;
import dev.jobapi.common.job.Job;
import dev.jobapi.common.job.JobState;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.persistence.TypedQuery;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.UUID;

/** Reads for GET /jobs and GET /jobs/{id}/output. */
@ApplicationScoped
public class JobQueries {

    /** One page of jobs plus whether more follow. */
    public record Page(List<Job> jobs, String nextCursor) {}

    private final EntityManager em;
    private final JobAccess access;
    private final AttemptRepository attempts;

    JobQueries(EntityManager em, JobAccess access, AttemptRepository attempts) {
        this.em = em;
        this.access = access;
        this.attempts = attempts;
    }

    /** The caller's own jobs, newest first, keyset-paginated on (createdAt, id). */
    public Page list(Caller caller, JobState state, int limit, String cursor) {
        StringBuilder jpql = new StringBuilder("from Job j where j.ownerId = :owner");
        if (state != null) {
            jpql.append(" and j.state = :state");
        }
        Cursor after = cursor == null ? null : Cursor.decode(cursor);
        if (after != null) {
            jpql.append(" and (j.createdAt < :at or (j.createdAt = :at and j.id < :id))");
        }
        jpql.append(" order by j.createdAt desc, j.id desc");
        TypedQuery<Job> query = em.createQuery(jpql.toString(), Job.class).setParameter("owner", caller.subject());
        if (state != null) {
            query.setParameter("state", state);
        }
        if (after != null) {
            query.setParameter("at", after.createdAt()).setParameter("id", after.id());
        }
        List<Job> rows = query.setMaxResults(limit + 1).getResultList();
        if (rows.size() <= limit) {
            return new Page(rows, null);
        }
        Job last = rows.get(limit - 1);
        return new Page(rows.subList(0, limit), new Cursor(last.createdAt(), last.id()).encode());
    }

    /** The winning attempt's stored patch; 409 no-output before a winner exists. */
    public Generation output(Caller caller, UUID jobId) {
        Job job = access.visible(caller, jobId);
        if (job.winningAttemptId() == null) {
            throw new ProblemException(
                    Problem.NO_OUTPUT, "Job " + jobId + " is " + job.state().wireName() + " and has no winner yet.");
        }
        return attempts.generation(job.winningAttemptId())
                .orElseThrow(() -> new IllegalStateException("Winner of job " + jobId + " has no generation"));
    }

    /** An opaque position in the newest-first order. */
    record Cursor(Instant createdAt, UUID id) {
        String encode() {
            String raw = createdAt.toString() + "|" + id;
            return Base64.getUrlEncoder().withoutPadding().encodeToString(raw.getBytes(StandardCharsets.UTF_8));
        }

        static Cursor decode(String encoded) {
            try {
                String raw = new String(Base64.getUrlDecoder().decode(encoded), StandardCharsets.UTF_8);
                int bar = raw.indexOf('|');
                return new Cursor(Instant.parse(raw.substring(0, bar)), UUID.fromString(raw.substring(bar + 1)));
            } catch (RuntimeException e) {
                throw new ProblemException(Problem.INVALID_REQUEST, "The cursor is not one this API issued.");
            }
        }
    }
}
