package dev.jobapi.api.service;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** Reads the audit trail and the job timelines. */
@ApplicationScoped
public class AuditLog {

    /** One audit record. */
    public record Entry(
            long id,
            Instant at,
            String actor,
            String action,
            @Schema(nullable = true) String reason,
            @Schema(nullable = true) UUID jobId,
            @Schema(nullable = true) UUID attemptId,
            @Schema(nullable = true) String details) {}

    /** One event of a job's timeline. */
    public record Event(
            long id,
            Instant at,
            String kind,
            @Schema(nullable = true) UUID attemptId,
            @Schema(nullable = true) String detail) {}

    private final EntityManager em;

    AuditLog(EntityManager em) {
        this.em = em;
    }

    /** Newest first; {@code before} is the id to continue below (exclusive), or null. */
    @Transactional
    public List<Entry> entries(Long before, int limit) {
        @SuppressWarnings("unchecked")
        List<Object[]> rows = em.createNativeQuery("SELECT id, at, actor, action, reason, job_id, attempt_id, details"
                        + " FROM audit_record WHERE id < ?1 ORDER BY id DESC LIMIT ?2")
                .setParameter(1, before == null ? Long.MAX_VALUE : before)
                .setParameter(2, limit)
                .getResultList();
        return rows.stream()
                .map(r -> new Entry(
                        ((Number) r[0]).longValue(),
                        (Instant) r[1],
                        (String) r[2],
                        (String) r[3],
                        (String) r[4],
                        (UUID) r[5],
                        (UUID) r[6],
                        (String) r[7]))
                .toList();
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
