package dev.jobapi.worker.provider;

import java.util.Locale;

/** Why a claim held its attempt unclaimed (docs/design.md, rules 19 and 21): a metric's tag. */
public enum HoldCause {
    /** An operator paused the provider. */
    PAUSED,
    /** The provider's circuit breaker is open, or half open with its probe out. */
    BREAKER,
    /** A rate limit holds the provider's calls: one it announced, or its configured per-minute limit. */
    RATE_LIMIT,
    /** The provider's or the owner's calls in flight reached their cap. */
    IN_FLIGHT_CAP;

    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }
}
