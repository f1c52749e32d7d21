package dev.jobapi.common.budget;

import jakarta.inject.Singleton;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;

/**
 * Whether an owner may start another attempt today: their provider-reported spend against their
 * budget. Attempts whose spend is unknown (quarantined, broken streams) cannot be summed: they are
 * reported beside the figures, never guessed into them. Manual attempts (API) and automatic
 * fallbacks (worker) both ask here.
 */
@Singleton
public class DailyBudgets {

    /** An owner's spent budget: the figures a refusal shows. */
    public record Spent(long budgetTokens, long spentTokensToday, long unknownSpendAttemptsToday, LocalDate day) {}

    private final EntityManager em;
    private final BudgetConfig config;
    private final Clock clock;

    DailyBudgets(EntityManager em, BudgetConfig config, Clock clock) {
        this.em = em;
        this.config = config;
        this.clock = clock;
    }

    /**
     * The figures when the owner's budget for today is spent; empty when they may start an attempt.
     * On the caller's connection, in its transaction: no statement at all when no budget applies.
     */
    public Optional<Spent> spent(Connection connection, String ownerId) throws SQLException {
        Optional<Long> budget =
                Optional.ofNullable(config.owners().get(ownerId)).or(config::dailyTokens);
        if (budget.isEmpty()) {
            return Optional.empty();
        }
        LocalDate today = LocalDate.now(clock.withZone(ZoneOffset.UTC));
        try (PreparedStatement select =
                connection.prepareStatement("SELECT coalesce(sum(prompt_tokens::bigint + completion_tokens), 0),"
                        + " count(*) FILTER (WHERE source = 'unknown') FROM usage_record"
                        + " WHERE owner_id = ? AND recorded_at >= ?")) {
            select.setString(1, ownerId);
            select.setObject(2, today.atStartOfDay().atOffset(ZoneOffset.UTC));
            try (ResultSet spent = select.executeQuery()) {
                spent.next();
                long tokens = spent.getLong(1);
                return tokens >= budget.get()
                        ? Optional.of(new Spent(budget.get(), tokens, spent.getLong(2), today))
                        : Optional.empty();
            }
        }
    }

    /**
     * The largest share of their daily budget any owner with a budget has spent today (1.0: spent),
     * 0 when nobody has a budget or spent anything: what the "budget nearly spent" alert watches.
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public double highestShareSpentToday() {
        if (config.dailyTokens().isEmpty() && config.owners().isEmpty()) {
            return 0;
        }
        LocalDate today = LocalDate.now(clock.withZone(ZoneOffset.UTC));
        @SuppressWarnings("unchecked")
        List<Object[]> spentByOwner = em.createNativeQuery(
                        "SELECT owner_id, coalesce(sum(prompt_tokens::bigint + completion_tokens), 0) FROM usage_record"
                                + " WHERE recorded_at >= ?1 GROUP BY owner_id")
                .setParameter(1, today.atStartOfDay(ZoneOffset.UTC).toInstant())
                .getResultList();
        double highest = 0;
        for (Object[] row : spentByOwner) {
            Optional<Long> budget =
                    Optional.ofNullable(config.owners().get((String) row[0])).or(config::dailyTokens);
            if (budget.isPresent() && budget.get() > 0) {
                highest = Math.max(highest, ((Number) row[1]).doubleValue() / budget.get());
            }
        }
        return highest;
    }
}
