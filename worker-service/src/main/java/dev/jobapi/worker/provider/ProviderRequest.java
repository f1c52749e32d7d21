package dev.jobapi.worker.provider;

import java.util.UUID;

/** What the worker asks of a provider: our attempt id and key travel with the prompt. */
public record ProviderRequest(UUID attemptId, String requestKey, String model, String prompt) {}
