package dev.jobapi.api.service;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;

/** Totals from the usage ledger: what each provider reported it spent, per owner and UTC day. */
@ApplicationScoped
public class UsageLedger {

    /**
     * One day at one provider. {@code unknownAttempts} counts attempts whose spend the provider
     * did not report (quarantined or broken streams): spent, but not in the token sums.
     */
    public record DayTotal(
            LocalDate day,
            String provider,
            long promptTokens,
            long completionTokens,
            long attempts,
            long unknownAttempts) {}

    private final EntityManager em;

    UsageLedger(EntityManager em) {
        this.em = em;
    }

    /** Days from {@code from} to {@code to}, both included, oldest first. */
    @Transactional
    public List<DayTotal> totals(String ownerId, LocalDate from, LocalDate to) {
        @SuppressWarnings("unchecked")
        List<Object[]> rows = em.createNativeQuery("SELECT (recorded_at AT TIME ZONE 'UTC')::date AS day, provider,"
                        + " coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0), count(*),"
                        + " count(*) FILTER (WHERE source = 'unknown')"
                        + " FROM usage_record WHERE owner_id = ?1 AND recorded_at >= ?2 AND recorded_at < ?3"
                        + " GROUP BY 1, 2 ORDER BY 1, 2")
                .setParameter(1, ownerId)
                .setParameter(2, from.atStartOfDay(ZoneOffset.UTC).toInstant())
                .setParameter(3, to.plusDays(1).atStartOfDay(ZoneOffset.UTC).toInstant())
                .getResultList();
        return rows.stream()
                .map(r -> new DayTotal(
                        r[0] instanceof java.sql.Date d ? d.toLocalDate() : (LocalDate) r[0],
                        (String) r[1],
                        ((Number) r[2]).longValue(),
                        ((Number) r[3]).longValue(),
                        ((Number) r[4]).longValue(),
                        ((Number) r[5]).longValue()))
                .toList();
    }
}
