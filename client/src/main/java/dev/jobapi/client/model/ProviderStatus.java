package dev.jobapi.client.model;

/**
 * A provider: has it earned automatic fallback, why not, its newest acceptance run (null: none), and
 * its pause (null: not paused), its health gate, its limits and its load against them.
 */
public record ProviderStatus(
        String name,
        boolean accepted,
        String refusal,
        AcceptanceRun latestRun,
        ProviderPause paused,
        ProviderHealth health,
        ProviderLimits limits,
        ProviderUsage usage) {}
