package dev.jobapi.client.model;

import java.math.BigDecimal;
import java.time.Instant;

/** A price version of a provider's model, in US dollars per million tokens, from {@code effectiveFrom}. */
public record Price(
        long id,
        String provider,
        String model,
        BigDecimal inputUsdPerMillionTokens,
        BigDecimal outputUsdPerMillionTokens,
        Instant effectiveFrom,
        String setBy,
        String reason) {}
