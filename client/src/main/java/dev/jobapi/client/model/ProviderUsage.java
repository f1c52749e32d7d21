package dev.jobapi.client.model;

/** A provider's load now: calls in flight, and the requests and tokens counted this UTC minute. */
public record ProviderUsage(long inFlight, int requestsThisMinute, long tokensThisMinute) {}
