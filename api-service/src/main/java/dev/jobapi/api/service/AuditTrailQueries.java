package dev.jobapi.api.service;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** Reads the audit trail (common's {@code AuditTrail} writes it). */
@ApplicationScoped
public class AuditTrailQueries {

    /** One audit record. */
    @Schema(name = "AuditEntry")
    public record Entry(
            long id,
            Instant at,
            String actor,
            String action,
            @Schema(nullable = true) String reason,
            @Schema(nullable = true) UUID jobId,
            @Schema(nullable = true) UUID attemptId,
            @Schema(nullable = true) String details) {}

    private final EntityManager em;

    AuditTrailQueries(EntityManager em) {
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
}
