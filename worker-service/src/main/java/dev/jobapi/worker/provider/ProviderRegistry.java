package dev.jobapi.worker.provider;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jobapi.worker.config.WorkerConfig;
import io.quarkus.runtime.StartupEvent;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import java.time.Clock;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import org.jboss.logging.Logger;

/**
 * The configured providers by name ({@code jobapi.provider.<name>.*}), one adapter each, built
 * once at startup from the provider's {@code kind}.
 */
@Singleton
public class ProviderRegistry {

    private static final Logger LOG = Logger.getLogger(ProviderRegistry.class);

    private final Map<String, StreamingHttpProvider> providers = new TreeMap<>();
    private final Map<String, String> models = new TreeMap<>();

    ProviderRegistry(WorkerConfig config, AnnouncedLimits limits, ObjectMapper mapper, Clock clock) {
        config.provider()
                .forEach((name, settings) -> providers.put(
                        name,
                        switch (settings.kind()) {
                            case OPENAI -> new OpenAiCompatibleProvider(
                                    name, settings, config.providers(), limits, mapper, clock);
                            case ANTHROPIC -> new AnthropicProvider(
                                    name, settings, config.providers(), limits, mapper, clock);
                        }));
        config.provider().forEach((name, settings) -> models.put(name, settings.model()));
    }

    /**
     * Says at startup which providers this worker reaches. A build configures none of its own
     * (docs/providers.md): a deployment that forgot them hears it now, not from the first
     * attempt's failure.
     */
    void report(@Observes StartupEvent event) {
        if (providers.isEmpty()) {
            LOG.warn("No provider is configured (jobapi.provider.<name>.kind, base-url, model; docs/providers.md):"
                    + " every attempt fails unsent until one is");
        } else {
            LOG.infof("Providers configured: %s", providers.keySet());
        }
    }

    /** Closes the providers' pooled connections when the worker stops. */
    @PreDestroy
    void close() {
        providers.values().forEach(StreamingHttpProvider::close);
    }

    /** The model the provider {@code name} is asked for; empty when the worker does not configure it. */
    public Optional<String> model(String name) {
        return Optional.ofNullable(models.get(name));
    }

    /**
     * The adapter for the provider {@code name}. A name this worker has no configuration for (the
     * API accepted it, the worker's config lacks it) gets an adapter that fails every call with
     * that reason without sending anything: the attempt fails once, visibly, instead of its
     * message being redelivered into the same error.
     */
    public ModelProvider forName(String name) {
        ModelProvider provider = providers.get(name);
        return provider != null
                ? provider
                : new Unconfigured(name, providers.keySet().toString());
    }

    /** Stands in for a provider name with no configuration: never sends, never finds. */
    private record Unconfigured(String name, String configured) implements ModelProvider {

        @Override
        public ProviderOutcome generate(ProviderRequest request) {
            LOG.warnf(
                    "Attempt %s names provider '%s', which this worker does not configure", request.attemptId(), name);
            return new ProviderOutcome.Failed(
                    null,
                    "not sent: no provider named '" + name + "' is configured in the worker (jobapi.provider." + name
                            + ".kind); configured: " + configured,
                    null,
                    false,
                    false);
        }

        @Override
        public Optional<ProviderOutcome> lookup(UUID attemptId, String remoteId) {
            return Optional.empty();
        }
    }
}
