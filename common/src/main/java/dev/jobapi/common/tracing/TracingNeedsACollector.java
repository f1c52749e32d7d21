package dev.jobapi.common.tracing;

import io.smallrye.config.ConfigSourceInterceptor;
import io.smallrye.config.ConfigSourceInterceptorContext;
import io.smallrye.config.ConfigValue;
import io.smallrye.config.Priorities;
import jakarta.annotation.Priority;

/**
 * Tracing is off until a collector is named: unless {@code quarkus.otel.sdk.disabled} is set
 * explicitly, the OpenTelemetry SDK is disabled when neither {@code
 * quarkus.otel.exporter.otlp.endpoint} nor {@code quarkus.otel.exporter.otlp.traces.endpoint} is
 * configured. The extension's own default endpoint (localhost:4317) does not count: with it a laptop
 * run or a test would make spans and log an export error every few seconds for a collector that is
 * not there. So {@code QUARKUS_OTEL_EXPORTER_OTLP_ENDPOINT} is the one variable a deployment sets
 * (README, "Tracing"); {@code QUARKUS_OTEL_SDK_DISABLED} still decides when given.
 */
@Priority(Priorities.APPLICATION)
public class TracingNeedsACollector implements ConfigSourceInterceptor {

    static final String SDK_DISABLED = "quarkus.otel.sdk.disabled";
    static final String ENDPOINT = "quarkus.otel.exporter.otlp.endpoint";
    static final String TRACES_ENDPOINT = "quarkus.otel.exporter.otlp.traces.endpoint";

    @Override
    public ConfigValue getValue(ConfigSourceInterceptorContext context, String name) {
        ConfigValue value = context.proceed(name);
        if (!SDK_DISABLED.equals(name) || configured(value)) {
            return value;
        }
        boolean collectorNamed = configured(context.proceed(ENDPOINT)) || configured(context.proceed(TRACES_ENDPOINT));
        return ConfigValue.builder()
                .withName(name)
                .withValue(String.valueOf(!collectorNamed))
                .withConfigSourceName(TracingNeedsACollector.class.getSimpleName())
                .build();
    }

    /**
     * Set by someone: an environment variable, a system property, a properties file or a test's
     * override. Defaults (an extension's, Quarkus' recorded ones) come from sources of negative
     * ordinal, below every source a person writes.
     */
    private static boolean configured(ConfigValue value) {
        return value != null
                && value.getValue() != null
                && !value.getValue().isBlank()
                && value.getConfigSourceOrdinal() > 0;
    }
}
