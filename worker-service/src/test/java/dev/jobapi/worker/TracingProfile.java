package dev.jobapi.worker;

import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.quarkus.test.junit.QuarkusTestProfile;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.util.Map;

/**
 * The worker with tracing on and its spans kept in memory ({@link InMemorySpanExporter}, a CDI bean the
 * extension exports to) instead of sent to a collector: the OTLP exporter is off, so nothing is tried
 * over the network. Batches leave every 50 ms so a test sees its spans soon after they end.
 */
public class TracingProfile implements QuarkusTestProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of(
                "quarkus.otel.sdk.disabled", "false",
                "quarkus.otel.exporter.otlp.enabled", "false",
                "quarkus.otel.bsp.schedule.delay", "50ms");
    }

    @Produces
    @Singleton
    InMemorySpanExporter inMemorySpanExporter() {
        return InMemorySpanExporter.create();
    }
}
