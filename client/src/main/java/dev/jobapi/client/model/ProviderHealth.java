package dev.jobapi.client.model;

import java.time.Instant;

/**
 * A provider's health gate: its circuit breaker ({@code closed}, {@code open}, {@code half_open}),
 * the calls and faults of the current window, and the rate limit it announced (null: none).
 * {@code open}: whether a call may start now. Half open, the probe calls counted so far, their
 * faults, and those under way.
 */
public record ProviderHealth(
        String provider,
        String breaker,
        int windowCalls,
        int windowFaults,
        Instant openedAt,
        Instant retryAt,
        String lastFault,
        Instant limitedUntil,
        String limitReason,
        boolean open,
        int probeCalls,
        int probeFaults,
        int probesUnderWay) {}
