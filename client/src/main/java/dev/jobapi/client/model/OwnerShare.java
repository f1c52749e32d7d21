package dev.jobapi.client.model;

import java.time.Instant;

/**
 * An owner's share of the workers: jobs per relay turn, and its calls in flight at once (null: the
 * workers' default); who set it, why and when (null for an owner never set).
 */
public record OwnerShare(
        String owner, int weight, Integer maxInFlight, String setBy, String reason, Instant updatedAt) {}
