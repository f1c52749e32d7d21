package dev.jobapi.api.service;

import dev.jobapi.api.mapping.JobSummary;
import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.security.Caller;
import dev.jobapi.common.attempt.AttemptRepository;
import dev.jobapi.common.attempt.Generation;
import dev.jobapi.common.job.Job;
import dev.jobapi.common.job.JobState;
import jakarta.inject.Singleton;
import jakarta.persistence.EntityManager;
import jakarta.persistence.Query;
import jakarta.transaction.Transactional;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** Reads for GET /jobs, GET /jobs/{id}/output and GET /jobs/{id}/timeline. */
@Singleton
public class JobQueries {

    /** One page of job summaries plus the cursor of the next page, if any. */
    public record Page(List<JobSummary> jobs, String nextCursor) {}

    /** One event of a job's timeline. */
    @Schema(name = "JobEvent")
    public record Event(
            long id,
            Instant at,
            String kind,
            @Schema(nullable = true) UUID attemptId,
            @Schema(nullable = true) String detail) {}

    private final EntityManager em;
    private final JobAccess access;
    private final AttemptRepository attempts;

    JobQueries(EntityManager em, JobAccess access, AttemptRepository attempts) {
        this.em = em;
        this.access = access;
        this.attempts = attempts;
    }

    /**
     * The caller's own jobs, newest first, keyset-paginated on (createdAt, id). The stored input never
     * leaves PostgreSQL, nor is it read there: the previews are columns intake wrote (V17), and its size
     * is the stored value's length, which PostgreSQL knows without reading the value.
     */
    @Transactional
    public Page list(Caller caller, JobState state, int limit, String cursor) {
        Cursor after = cursor == null ? null : Cursor.decode(cursor);
        StringBuilder sql = new StringBuilder("SELECT id, state, idempotency_key, input_digest, octet_length(input),"
                + " input_prompt_preview, input_repository_preview, input_base_ref_preview,"
                + " provider, winning_attempt_id, version, created_at, updated_at FROM job WHERE owner_id = :owner");
        if (state != null) {
            sql.append(" AND state = :state");
        }
        if (after != null) {
            sql.append(" AND (created_at < :at OR (created_at = :at AND id < :id))");
        }
        sql.append(" ORDER BY created_at DESC, id DESC LIMIT :limit");
        Query query = em.createNativeQuery(sql.toString())
                .setParameter("owner", caller.subject())
                .setParameter("limit", limit + 1);
        if (state != null) {
            query.setParameter("state", state.wireName());
        }
        if (after != null) {
            query.setParameter("at", after.createdAt()).setParameter("id", after.id());
        }
        @SuppressWarnings("unchecked")
        List<Object[]> rows = query.getResultList();
        List<JobSummary> jobs =
                rows.stream().limit(limit).map(JobQueries::summary).toList();
        if (rows.size() <= limit) {
            return new Page(jobs, null);
        }
        JobSummary last = jobs.get(limit - 1);
        return new Page(jobs, new Cursor(last.createdAt(), last.id()).encode());
    }

    private static JobSummary summary(Object[] row) {
        return new JobSummary(
                (UUID) row[0],
                JobState.fromWireName((String) row[1]),
                (String) row[2],
                (String) row[3],
                new JobSummary.InputPreview((String) row[5], (String) row[6], (String) row[7]),
                ((Number) row[4]).longValue(),
                (String) row[8],
                (UUID) row[9],
                ((Number) row[10]).longValue(),
                (Instant) row[11],
                (Instant) row[12]);
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
        /** The range a cursor's date may name: any job's creation time lies well inside it. */
        private static final Instant EARLIEST = Instant.parse("2000-01-01T00:00:00Z");

        private static final Instant LATEST = Instant.parse("9999-12-31T23:59:59Z");

        String encode() {
            String raw = createdAt.toString() + "|" + id;
            return Base64.getUrlEncoder().withoutPadding().encodeToString(raw.getBytes(StandardCharsets.UTF_8));
        }

        static Cursor decode(String encoded) {
            try {
                String raw = new String(Base64.getUrlDecoder().decode(encoded), StandardCharsets.UTF_8);
                int bar = raw.indexOf('|');
                Cursor cursor =
                        new Cursor(Instant.parse(raw.substring(0, bar)), UUID.fromString(raw.substring(bar + 1)));
                // A date no job can have (PostgreSQL's timestamps end in 294276) would fail the query.
                if (cursor.createdAt().isBefore(EARLIEST) || cursor.createdAt().isAfter(LATEST)) {
                    throw new IllegalArgumentException("out of range");
                }
                return cursor;
            } catch (RuntimeException e) {
                throw new ProblemException(Problem.INVALID_QUERY, "The cursor is not one this API issued.");
            }
        }
    }

    /** The job's events in the order they committed, from the one after {@code after} on, {@code limit} at most. */
    @Transactional
    public List<Event> timeline(UUID jobId, long after, int limit) {
        @SuppressWarnings("unchecked")
        List<Object[]> rows = em.createNativeQuery("SELECT id, at, kind, attempt_id, detail FROM job_event"
                        + " WHERE job_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3")
                .setParameter(1, jobId)
                .setParameter(2, after)
                .setParameter(3, limit)
                .getResultList();
        return rows.stream()
                .map(r -> new Event(
                        ((Number) r[0]).longValue(), (Instant) r[1], (String) r[2], (UUID) r[3], (String) r[4]))
                .toList();
    }
}
