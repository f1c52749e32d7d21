package dev.jobapi.worker.provider;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jobapi.worker.config.WorkerConfig;
import java.time.Clock;
import java.util.Optional;

/**
 * Adapters built by hand in a test: the provider's name is its model too, no API key, and the rate
 * limits it announces go nowhere.
 */
final class TestAdapters {

    private TestAdapters() {}

    static OpenAiCompatibleProvider openAi(String name, String baseUrl, TestTransport transport) {
        return new OpenAiCompatibleProvider(
                name,
                new TestProviderSettings(WorkerConfig.Provider.Kind.OPENAI, baseUrl, name, Optional.empty()),
                transport,
                (provider, wait, reason) -> {},
                new ObjectMapper(),
                Clock.systemUTC());
    }

    static AnthropicProvider anthropic(String name, String baseUrl, TestTransport transport) {
        return new AnthropicProvider(
                name,
                new TestProviderSettings(WorkerConfig.Provider.Kind.ANTHROPIC, baseUrl, name, Optional.empty()),
                transport,
                (provider, wait, reason) -> {},
                new ObjectMapper(),
                Clock.systemUTC());
    }
}
