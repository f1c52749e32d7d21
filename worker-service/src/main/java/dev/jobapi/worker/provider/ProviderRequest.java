package dev.jobapi.worker.provider;

import java.util.UUID;

/**
 * What the worker asks of a provider: our attempt id and key travel with the prompt. {@code
 * provider} is the attempt's provider name; the adapter for it sends its configured model.
 */
public record ProviderRequest(UUID attemptId, String requestKey, String provider, String prompt) {}
