package dev.jobapi.api.service;

import dev.jobapi.api.config.JobApiConfig;
import dev.jobapi.api.rest.Problem;
import dev.jobapi.api.rest.ProblemException;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.time.Clock;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.Optional;

/**
 * Refuses to start an attempt for an owner whose provider-reported spend today has reached their
 * budget. Attempts whose spend is unknown (quarantined, broken streams) cannot be summed: they are
 * reported beside the figures, never guessed into them.
 */
@ApplicationScoped
public class Budgets {

    private final EntityManager em;
    private final JobApiConfig.Budget config;
    private final Clock clock;

    Budgets(EntityManager em, JobApiConfig config, Clock clock) {
        this.em = em;
        this.config = config.budget();
        this.clock = clock;
    }

    /** Throws 429 budget-exceeded, with the figures, when the owner may not start another attempt today. */
    @Transactional(Transactional.TxType.MANDATORY)
    public void requireRoomFor(String ownerId) {
        Optional<Long> budget =
                Optional.ofNullable(config.owners().get(ownerId)).or(config::dailyTokens);
        if (budget.isEmpty()) {
            return;
        }
        LocalDate today = LocalDate.now(clock.withZone(ZoneOffset.UTC));
        Object[] spent = (Object[]) em.createNativeQuery("SELECT coalesce(sum(prompt_tokens + completion_tokens), 0),"
                        + " count(*) FILTER (WHERE source = 'unknown') FROM usage_record"
                        + " WHERE owner_id = ?1 AND recorded_at >= ?2")
                .setParameter(1, ownerId)
                .setParameter(2, today.atStartOfDay(ZoneOffset.UTC).toInstant())
                .getSingleResult();
        long tokens = ((Number) spent[0]).longValue();
        long unknown = ((Number) spent[1]).longValue();
        if (tokens >= budget.get()) {
            throw new ProblemException(
                    Problem.BUDGET_EXCEEDED,
                    "Providers reported " + tokens + " tokens spent today against a budget of " + budget.get()
                            + "; new attempts start again tomorrow (UTC).",
                    Map.of(
                            "budgetTokens",
                            budget.get(),
                            "spentTokensToday",
                            tokens,
                            "unknownSpendAttemptsToday",
                            unknown,
                            "day",
                            today.toString()));
        }
    }
}
