package dev.jobapi.api.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.jobapi.api.config.JobApiConfig;
import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The providers a client may name come from the deployment, never from the build: the production
 * profile of this service's own application.properties names none (local runs take the fake
 * provider's from dev/config, tests from the %test profile).
 */
class ProviderRegistryTest {

    @Test
    void theProductionProfileAcceptsNoProviderNamesNoDefaultAndVerifiesNoCallback() throws IOException {
        JobApiConfig config = configOf("prod", Map.of());

        assertThat(config.providers().names()).isEmpty();
        assertThat(config.providers().defaultProvider()).isEmpty();
        assertThat(config.callbacks().provider()).isEmpty();
    }

    @Test
    void withNoProviderConfiguredEveryJobIsRefusedWhetherItNamesOneOrNot() throws IOException {
        ProviderRegistry providers = new ProviderRegistry(configOf("prod", Map.of()));

        assertThat(providers.names()).isEmpty();
        assertThatThrownBy(() -> providers.resolve("fake-a"))
                .isInstanceOfSatisfying(
                        ProblemException.class, e -> assertThat(e.problem()).isEqualTo(Problem.UNKNOWN_PROVIDER))
                .hasMessageContaining("Provider 'fake-a' is not configured; known: []");
        assertThatThrownBy(() -> providers.resolve(null))
                .isInstanceOfSatisfying(
                        ProblemException.class, e -> assertThat(e.problem()).isEqualTo(Problem.UNKNOWN_PROVIDER))
                .hasMessageContaining("names no provider and no default provider is configured");
    }

    @Test
    void aDeploymentNamesItsProvidersAndTheDefaultOneIsUsedWhenAJobNamesNone() throws IOException {
        ProviderRegistry providers = new ProviderRegistry(configOf(
                "prod",
                Map.of("jobapi.providers.names", "openai,claude", "jobapi.providers.default-provider", "openai")));

        assertThat(providers.names()).containsExactly("openai", "claude");
        assertThat(providers.resolve(null)).isEqualTo("openai");
        assertThat(providers.resolve("claude")).isEqualTo("claude");
    }

    @Test
    void aPageIsOfferedTheDefaultProviderFirstAndTheOthersInTheirConfiguredOrder() throws IOException {
        ProviderRegistry providers = new ProviderRegistry(configOf(
                "prod",
                Map.of(
                        "jobapi.providers.names",
                        "openai,claude,mistral",
                        "jobapi.providers.default-provider",
                        "claude")));

        assertThat(providers.namesDefaultFirst()).containsExactly("claude", "openai", "mistral");
        assertThat(providers.names()).containsExactly("openai", "claude", "mistral");
    }

    /**
     * This module's application.properties in {@code profile} as Quarkus reads it, with {@code set}
     * above it as the environment would be.
     */
    private static JobApiConfig configOf(String profile, Map<String, String> set) throws IOException {
        return new SmallRyeConfigBuilder()
                .withProfile(profile)
                .withSources(new PropertiesConfigSource(
                        Path.of("src/main/resources/application.properties")
                                .toUri()
                                .toURL(),
                        250))
                .withSources(new PropertiesConfigSource(set, "environment", 300))
                .withMapping(JobApiConfig.class)
                // Durations as Quarkus writes them ("5m", "20s").
                .withConverter(Duration.class, 100, new DurationConverter())
                // The file holds every other extension's keys too; only this mapping is read here.
                .withValidateUnknown(false)
                .build()
                .getConfigMapping(JobApiConfig.class);
    }
}
