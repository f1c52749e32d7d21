package dev.jobapi.client.model;

import java.math.BigDecimal;
import java.time.LocalDate;

/**
 * A money budget of an owner for a UTC day or month, and where it stands in the current period:
 * {@code provider} is the one provider whose calls it holds, null for the calls to every provider;
 * {@code reservedUsd} is held by calls under way, the most each can cost.
 */
public record Budget(
        String period,
        String provider,
        LocalDate periodStartsOn,
        BigDecimal limitUsd,
        int softPercent,
        boolean defaultBudget,
        BigDecimal spentUsd,
        BigDecimal reservedUsd,
        BigDecimal remainingUsd,
        boolean pastSoftThreshold) {}
