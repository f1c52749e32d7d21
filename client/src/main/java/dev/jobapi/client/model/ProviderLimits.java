package dev.jobapi.client.model;

/**
 * A provider's limits, as the newest worker to start was configured with; each null when it has
 * none: calls in flight at once, calls and tokens per UTC minute.
 */
public record ProviderLimits(Integer maxInFlight, Integer requestsPerMinute, Integer tokensPerMinute) {}
