package dev.jobapi.api.service;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.common.audit.AuditTrail;
import dev.jobapi.common.budget.SpendBudgets;
import dev.jobapi.common.time.SqlTimes;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.math.BigDecimal;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDate;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Objects;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/**
 * Operators set money budgets and prices (docs/design.md, rule 20), each change audited in its own
 * transaction; owners and operators read where a budget stands. A budget change applies to the next
 * claim; a price change is a new version, so the attempts claimed at the old price keep it.
 */
@ApplicationScoped
public class SpendAdmin {

    /** The largest amount the tables hold (numeric(14,6)). */
    static final BigDecimal MOST_USD = new BigDecimal("99999999.999999");

    /** A budget and where it stands in its current period. */
    public record BudgetView(
            @Schema(enumeration = {"day", "month"}) String period,
            @Schema(
                            nullable = true,
                            description = "The one provider whose calls it holds; null: the calls to every provider")
                    String provider,
            LocalDate periodStartsOn,
            BigDecimal limitUsd,
            int softPercent,
            @Schema(description = "true: the deployment's default (properties); false: set for this owner")
                    boolean defaultBudget,
            BigDecimal spentUsd,
            @Schema(description = "Held by calls under way: the most each can cost") BigDecimal reservedUsd,
            BigDecimal remainingUsd,
            boolean pastSoftThreshold) {

        static BudgetView of(SpendBudgets.Standing s) {
            return new BudgetView(
                    s.period().wireName(),
                    s.provider(),
                    s.startsOn(),
                    s.limitUsd(),
                    s.softPercent(),
                    s.defaultBudget(),
                    s.spentUsd(),
                    s.reservedUsd(),
                    s.remainingUsd(),
                    s.pastSoftThreshold());
        }
    }

    /** A price version: US dollars per million tokens, from {@code effectiveFrom} until the next version. */
    public record Price(
            long id,
            String provider,
            String model,
            BigDecimal inputUsdPerMillionTokens,
            BigDecimal outputUsdPerMillionTokens,
            Instant effectiveFrom,
            String setBy,
            String reason) {}

    private final EntityManager em;
    private final SpendBudgets budgets;
    private final ProviderRegistry providers;
    private final AuditTrail audit;
    private final Clock clock;

    SpendAdmin(EntityManager em, SpendBudgets budgets, ProviderRegistry providers, AuditTrail audit, Clock clock) {
        this.em = em;
        this.budgets = budgets;
        this.providers = providers;
        this.audit = audit;
        this.clock = clock;
    }

    /**
     * The owner's budgets (set or default, of every provider and of one) and where each stands; empty
     * when none applies.
     */
    @Transactional
    public List<BudgetView> budgets(String ownerId) {
        return budgets.standings(ownerId, clock.instant()).stream()
                .map(BudgetView::of)
                .toList();
    }

    /**
     * Sets the owner's budget for a period, of every provider ({@code provider} null) or of one
     * configured provider; the next claim of theirs is held to it.
     */
    @Transactional
    public BudgetView setBudget(
            String operator,
            String ownerId,
            String periodName,
            String provider,
            BigDecimal limitUsd,
            int softPercent,
            String reason) {
        SpendBudgets.Period period = period(periodName);
        if (provider != null) {
            providers.requireKnown(provider);
        }
        requireAmount("limitUsd", limitUsd);
        if (softPercent < 1 || softPercent > 100) {
            throw new ProblemException(Problem.INVALID_REQUEST, "'softPercent' must be from 1 to 100.");
        }
        em.createNativeQuery("INSERT INTO spend_budget (owner_id, period, provider, limit_usd, soft_percent, set_by,"
                        + " set_at, reason) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
                        + " ON CONFLICT (owner_id, period, provider) DO UPDATE"
                        + " SET limit_usd = excluded.limit_usd, soft_percent = excluded.soft_percent,"
                        + " set_by = excluded.set_by, set_at = excluded.set_at, reason = excluded.reason")
                .setParameter(1, ownerId)
                .setParameter(2, period.wireName())
                .setParameter(3, providerColumn(provider))
                .setParameter(4, limitUsd)
                .setParameter(5, softPercent)
                .setParameter(6, operator)
                .setParameter(7, clock.instant().truncatedTo(ChronoUnit.MICROS))
                .setParameter(8, reason)
                .executeUpdate();
        audit.record(
                operator,
                "budget.set",
                reason,
                null,
                null,
                "owner " + ownerId + ", " + period.wireName() + forProvider(provider) + " " + limitUsd.toPlainString()
                        + " USD, soft " + softPercent + "%");
        return budgets.standings(ownerId, clock.instant()).stream()
                .filter(s -> s.period() == period && Objects.equals(s.provider(), provider))
                .map(BudgetView::of)
                .findFirst()
                .orElseThrow();
    }

    /**
     * Removes the owner's budget for a period, of every provider ({@code provider} null: the
     * deployment's default, if any, applies again) or of one provider; the next claim of theirs is no
     * longer held to it, calls under way keep their reservations until they settle.
     */
    @Transactional
    public void removeBudget(String operator, String ownerId, String periodName, String provider, String reason) {
        SpendBudgets.Period period = period(periodName);
        int removed = em.createNativeQuery(
                        "DELETE FROM spend_budget WHERE owner_id = ?1 AND period = ?2 AND provider = ?3")
                .setParameter(1, ownerId)
                .setParameter(2, period.wireName())
                .setParameter(3, providerColumn(provider))
                .executeUpdate();
        if (removed == 0) {
            throw new ProblemException(
                    Problem.NOT_FOUND,
                    "Owner " + ownerId + " has no " + period.wireName() + " budget" + forProvider(provider) + " set.");
        }
        audit.record(
                operator,
                "budget.remove",
                reason,
                null,
                null,
                "owner " + ownerId + ", " + period.wireName() + forProvider(provider));
    }

    private static SpendBudgets.Period period(String periodName) {
        return SpendBudgets.Period.fromWireName(periodName)
                .orElseThrow(() -> new ProblemException(
                        Problem.NOT_FOUND, "No budget period '" + periodName + "': day or month."));
    }

    private static String providerColumn(String provider) {
        return provider == null ? SpendBudgets.EVERY_PROVIDER : provider;
    }

    private static String forProvider(String provider) {
        return provider == null ? "" : " for provider " + provider;
    }

    /** Sets a new price version for a provider's model, effective now. */
    @Transactional
    public Price setPrice(
            String operator, String provider, String model, BigDecimal input, BigDecimal output, String reason) {
        providers.requireKnown(provider);
        if (model == null || model.isBlank() || model.length() > 200) {
            throw new ProblemException(Problem.INVALID_REQUEST, "'model' is required, at most 200 characters.");
        }
        requireAmount("inputUsdPerMillionTokens", input);
        requireAmount("outputUsdPerMillionTokens", output);
        Instant now = clock.instant().truncatedTo(ChronoUnit.MICROS);
        Number id = (Number) em.createNativeQuery("INSERT INTO provider_price (provider, model, input_usd_per_mtok,"
                        + " output_usd_per_mtok, effective_from, set_by, reason) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
                        + " RETURNING id")
                .setParameter(1, provider)
                .setParameter(2, model)
                .setParameter(3, input)
                .setParameter(4, output)
                .setParameter(5, now)
                .setParameter(6, operator)
                .setParameter(7, reason)
                .getSingleResult();
        audit.record(
                operator,
                "price.set",
                reason,
                null,
                null,
                "provider " + provider + ", model " + model + ": " + input.toPlainString() + " USD input, "
                        + output.toPlainString() + " USD output per million tokens");
        return new Price(id.longValue(), provider, model, input, output, now, operator, reason);
    }

    /** The price in force for each provider and model, by provider and model. */
    @Transactional
    public List<Price> currentPrices() {
        @SuppressWarnings("unchecked")
        List<Object[]> rows = em.createNativeQuery("SELECT DISTINCT ON (provider, model) id, provider, model,"
                        + " input_usd_per_mtok, output_usd_per_mtok, effective_from, set_by, reason FROM provider_price"
                        + " WHERE effective_from <= ?1 ORDER BY provider, model, effective_from DESC, id DESC")
                .setParameter(1, clock.instant())
                .getResultList();
        return rows.stream()
                .map(r -> new Price(
                        ((Number) r[0]).longValue(),
                        (String) r[1],
                        (String) r[2],
                        (BigDecimal) r[3],
                        (BigDecimal) r[4],
                        SqlTimes.instant(r[5]),
                        (String) r[6],
                        (String) r[7]))
                .toList();
    }

    private static void requireAmount(String field, BigDecimal amount) {
        if (amount == null
                || amount.signum() < 0
                || amount.compareTo(MOST_USD) > 0
                || amount.stripTrailingZeros().scale() > 6) {
            throw new ProblemException(
                    Problem.INVALID_REQUEST,
                    "'" + field + "' is required: US dollars from 0 to " + MOST_USD.toPlainString()
                            + ", at most 6 decimals.");
        }
    }
}
