package dev.jobapi.common.budget;

import io.smallrye.config.ConfigMapping;
import java.util.Map;
import java.util.Optional;

/** Per-owner daily token budgets, from the usage ledger (UTC days); read by the API and the worker. */
@ConfigMapping(prefix = "jobapi.budget")
public interface BudgetConfig {

    /** Tokens (prompt + completion, as providers reported them) an owner may spend a day; none = no limit. */
    Optional<Long> dailyTokens();

    /** Per-owner overrides of {@code daily-tokens}, keyed by the token's subject. */
    Map<String, Long> owners();
}
