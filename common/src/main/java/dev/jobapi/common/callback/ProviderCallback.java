package dev.jobapi.common.callback;

import java.time.Instant;
import java.util.UUID;

/**
 * A result a provider pushed for one of our attempts, after its signature was verified. Token
 * counts are null when the provider reported none (the attempt is then quarantined).
 */
public record ProviderCallback(
        UUID attemptId,
        String provider,
        String remoteId,
        byte[] output,
        Integer promptTokens,
        Integer completionTokens,
        Instant signedAt) {}
