package dev.jobapi.worker.provider;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A provider's base URL names the host its requests go to; one that names none stops the worker's
 * start with the key to fix (docs/providers.md), rather than failing every attempt sent to it.
 */
class ProviderBaseUrlTest {

    private static final TestTransport TRANSPORT =
            new TestTransport(Duration.ofSeconds(1), Duration.ofSeconds(1), 1, Duration.ofMillis(50), 1024 * 1024);

    @ParameterizedTest
    @ValueSource(strings = {"api.openai.com", "ftp://api.openai.com", "http:///v1", "https://api openai.com", ""})
    void aBaseUrlWithoutAnHttpHostIsRefusedNamingItsKey(String baseUrl) {
        assertThatThrownBy(() -> TestAdapters.openAi("misconfigured", baseUrl, TRANSPORT))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(
                        "jobapi.provider.misconfigured.base-url must be an http or https URL with a host");
        assertThatThrownBy(() -> TestAdapters.anthropic("misconfigured", baseUrl, TRANSPORT))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("jobapi.provider.misconfigured.base-url");
    }

    @ParameterizedTest
    @ValueSource(strings = {"https://api.openai.com", "http://127.0.0.1:18090", "https://proxy.example:8443/openai"})
    void anHttpBaseUrlIsTaken(String baseUrl) {
        assertThatCode(() -> TestAdapters.openAi("configured", baseUrl, TRANSPORT))
                .doesNotThrowAnyException();
        assertThatCode(() -> TestAdapters.anthropic("configured", baseUrl, TRANSPORT))
                .doesNotThrowAnyException();
    }
}
