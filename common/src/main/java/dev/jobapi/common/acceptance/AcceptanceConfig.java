package dev.jobapi.common.acceptance;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.Optional;

/** How providers earn automatic fallback; read by the API (to show it) and the worker (to run and obey it). */
@ConfigMapping(prefix = "jobapi.acceptance")
public interface AcceptanceConfig {

    /** Automatic fallback moves only to a provider whose latest finished run passed this recently. */
    @WithDefault("7d")
    Duration freshness();

    /** How often an idle worker looks for requested runs. */
    @WithDefault("5s")
    Duration pollInterval();

    /** A claimed run is taken over by another worker when its worker has not reported for this long. */
    @WithDefault("10m")
    Duration lease();

    /** A fixtures file of your own (JSON, the format of the built-in acceptance/fixtures.json). */
    Optional<String> fixtures();

    /** Longest a command check may run before it counts as failed. */
    @WithDefault("30s")
    Duration commandTimeout();
}
