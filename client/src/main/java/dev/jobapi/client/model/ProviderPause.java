package dev.jobapi.client.model;

import java.time.Instant;

/** A provider an operator paused: who, when, why. */
public record ProviderPause(String provider, String pausedBy, Instant pausedAt, String reason) {}
