package dev.jobapi.common.start;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/** Bounds on the attempts of one job; read by the API and the worker's automatic fallback. */
@ConfigMapping(prefix = "jobapi.attempts")
public interface AttemptLimits {

    /**
     * Attempts one job may have, whatever their states. Enough for every provider of a fallback list
     * and a reviewer's retries (16); a bound on a job's paid calls, and on the rows each new attempt
     * request locks (every attempt of the job, to decide).
     */
    @WithDefault("16")
    int perJob();
}
