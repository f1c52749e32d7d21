package dev.jobapi.worker.provider;

import dev.jobapi.worker.config.WorkerConfig;
import java.time.Duration;
import java.util.Optional;

/**
 * A provider's settings for an adapter built by hand in a test: the transport defaults, 1,024 tokens
 * at most, no fallback and no limits.
 */
record TestProviderSettings(Kind kind, String baseUrl, String model, Optional<String> apiKey)
        implements WorkerConfig.Provider {

    @Override
    public Optional<Duration> readTimeout() {
        return Optional.empty();
    }

    @Override
    public Optional<Duration> connectTimeout() {
        return Optional.empty();
    }

    @Override
    public int maxTokens() {
        return 1024;
    }

    @Override
    public boolean automaticFallback() {
        return false;
    }

    @Override
    public Optional<Integer> maxInFlight() {
        return Optional.empty();
    }

    @Override
    public Optional<Integer> requestsPerMinute() {
        return Optional.empty();
    }

    @Override
    public Optional<Integer> tokensPerMinute() {
        return Optional.empty();
    }
}
