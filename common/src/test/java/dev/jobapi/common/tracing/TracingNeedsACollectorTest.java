package dev.jobapi.common.tracing;

import static org.assertj.core.api.Assertions.assertThat;

import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The SDK runs only where a collector is named, or where someone says so. */
class TracingNeedsACollectorTest {

    @Test
    void sdkIsDisabledWhenOnlyTheExtensionsDefaultEndpointIsThere() {
        assertThat(sdkDisabled(Map.of())).isTrue();
    }

    @Test
    void anEndpointFromTheEnvironmentTurnsTheSdkOn() {
        assertThat(sdkDisabled(Map.of(TracingNeedsACollector.ENDPOINT, "http://otel-collector:4317")))
                .isFalse();
        assertThat(sdkDisabled(Map.of(TracingNeedsACollector.TRACES_ENDPOINT, "http://otel-collector:4317")))
                .isFalse();
    }

    @Test
    void anExplicitSwitchDecidesEitherWay() {
        assertThat(sdkDisabled(Map.of(TracingNeedsACollector.SDK_DISABLED, "false")))
                .isFalse();
        assertThat(sdkDisabled(Map.of(
                        TracingNeedsACollector.ENDPOINT, "http://otel-collector:4317",
                        TracingNeedsACollector.SDK_DISABLED, "true")))
                .isTrue();
    }

    /** As Quarkus resolves it: the extension's defaults below, {@code set} as the environment (300). */
    private static boolean sdkDisabled(Map<String, String> set) {
        SmallRyeConfig config = new SmallRyeConfigBuilder()
                .withInterceptors(new TracingNeedsACollector())
                .withDefaultValue(TracingNeedsACollector.SDK_DISABLED, "false")
                .withDefaultValue(TracingNeedsACollector.ENDPOINT, "http://localhost:4317/")
                .withDefaultValue(TracingNeedsACollector.TRACES_ENDPOINT, "http://localhost:4317/")
                .withSources(new PropertiesConfigSource(set, "environment", 300))
                .build();
        return config.getValue(TracingNeedsACollector.SDK_DISABLED, Boolean.class);
    }
}
