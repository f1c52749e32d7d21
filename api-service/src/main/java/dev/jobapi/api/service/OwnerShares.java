package dev.jobapi.api.service;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.common.audit.AuditTrail;
import dev.jobapi.common.time.SqlTimes;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/**
 * An owner's share of the workers (issue 32, docs/design.md "Fair share"): the weight of its turns at
 * the relay and the cap on its calls in flight at the claim, set by operators and audited.
 */
@ApplicationScoped
public class OwnerShares {

    static final int MAX_WEIGHT = 100;

    /** An owner's share; an owner no operator set has weight 1 and the workers' default cap. */
    @Schema(name = "OwnerShare")
    public record Share(
            String owner,
            @Schema(minimum = "1", maximum = "100", description = "Jobs of this owner the relay sends per turn")
                    int weight,
            @Schema(
                            nullable = true,
                            minimum = "1",
                            description = "Its calls in flight at once; null: the workers' default"
                                    + " (jobapi.provider-gate.owner-max-in-flight), if any")
                    Integer maxInFlight,
            @Schema(nullable = true) String setBy,
            @Schema(nullable = true) String reason,
            @Schema(nullable = true) Instant updatedAt) {}

    private final EntityManager em;
    private final AuditTrail audit;
    private final Clock clock;

    OwnerShares(EntityManager em, AuditTrail audit, Clock clock) {
        this.em = em;
        this.audit = audit;
        this.clock = clock;
    }

    @Transactional
    public Share of(String owner) {
        @SuppressWarnings("unchecked")
        List<Object[]> rows = em.createNativeQuery(
                        "SELECT weight, max_in_flight, set_by, reason, updated_at FROM owner_share WHERE owner_id = ?1")
                .setParameter(1, owner)
                .getResultList();
        if (rows.isEmpty()) {
            return new Share(owner, 1, null, null, null, null);
        }
        Object[] row = rows.get(0);
        return new Share(
                owner,
                ((Number) row[0]).intValue(),
                row[1] == null ? null : ((Number) row[1]).intValue(),
                (String) row[2],
                (String) row[3],
                SqlTimes.instant(row[4]));
    }

    /** Sets the owner's weight and cap from the next relay round and claim on; audited. */
    @Transactional
    public Share set(String operator, String owner, int weight, Integer maxInFlight, String reason) {
        if (weight < 1 || weight > MAX_WEIGHT) {
            throw new ProblemException(Problem.INVALID_REQUEST, "'weight' must be 1-" + MAX_WEIGHT + ".");
        }
        if (maxInFlight != null && maxInFlight < 1) {
            throw new ProblemException(Problem.INVALID_REQUEST, "'maxInFlight' must be at least 1, or null.");
        }
        Instant now = clock.instant().truncatedTo(ChronoUnit.MICROS);
        em.createNativeQuery("INSERT INTO owner_share (owner_id, weight, max_in_flight, set_by, reason, updated_at)"
                        + " VALUES (?1, ?2, CAST(?3 AS int), ?4, ?5, ?6) ON CONFLICT (owner_id) DO UPDATE SET"
                        + " weight = excluded.weight, max_in_flight = excluded.max_in_flight,"
                        + " set_by = excluded.set_by, reason = excluded.reason, updated_at = excluded.updated_at")
                .setParameter(1, owner)
                .setParameter(2, weight)
                .setParameter(3, maxInFlight == null ? null : maxInFlight.toString())
                .setParameter(4, operator)
                .setParameter(5, reason)
                .setParameter(6, now)
                .executeUpdate();
        audit.record(
                operator,
                "owner-share.set",
                reason,
                null,
                null,
                "owner " + owner + ": weight " + weight + ", calls in flight "
                        + (maxInFlight == null ? "the default" : "at most " + maxInFlight));
        return new Share(owner, weight, maxInFlight, operator, reason, now);
    }
}
