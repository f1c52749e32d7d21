package dev.jobapi.api.service;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.persistence.Query;
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

    private static final String TOTALS = "SELECT (recorded_at AT TIME ZONE 'UTC')::date AS day, provider,"
            + " coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0), count(*),"
            + " count(*) FILTER (WHERE source = 'unknown')"
            + " FROM usage_record WHERE recorded_at >= :from AND recorded_at < :to";

    private static final String BY_DAY_AND_PROVIDER = " GROUP BY 1, 2 ORDER BY 1, 2";

    /** Days from {@code from} to {@code to}, both included, oldest first. */
    @Transactional
    public List<DayTotal> totals(String ownerId, LocalDate from, LocalDate to) {
        return totals(
                em.createNativeQuery(TOTALS + " AND owner_id = :owner" + BY_DAY_AND_PROVIDER)
                        .setParameter("owner", ownerId),
                from,
                to);
    }

    /** Every owner's spend together, from {@code from} to {@code to}, both included, oldest first. */
    @Transactional
    public List<DayTotal> totalsOfAllOwners(LocalDate from, LocalDate to) {
        return totals(em.createNativeQuery(TOTALS + BY_DAY_AND_PROVIDER), from, to);
    }

    private List<DayTotal> totals(Query query, LocalDate from, LocalDate to) {
        @SuppressWarnings("unchecked")
        List<Object[]> rows = query.setParameter(
                        "from", from.atStartOfDay(ZoneOffset.UTC).toInstant())
                .setParameter("to", to.plusDays(1).atStartOfDay(ZoneOffset.UTC).toInstant())
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
