package dev.jobapi.common.budget;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.math.BigDecimal;
import java.util.Optional;

/**
 * The default money budgets, for owners an operator set none for (docs/design.md, rule 20). An
 * operator's budget for an owner and period, set through the API, replaces the default.
 */
@ConfigMapping(prefix = "jobapi.spend")
public interface SpendConfig {

    /** US dollars an owner may spend per UTC day; none: no daily limit. */
    Optional<BigDecimal> dayUsd();

    /** US dollars an owner may spend per UTC month; none: no monthly limit. */
    Optional<BigDecimal> monthUsd();

    /** The share of a default budget, in percent, past which the soft threshold is crossed. */
    @WithDefault("80")
    int softPercent();
}
