package dev.jobapi.worker.provider;

import dev.jobapi.worker.config.WorkerConfig;
import java.time.Duration;

/** The transport settings of an adapter built by hand in a test, every one given. */
record TestTransport(Duration connectTimeout, Duration readTimeout, int maxSends, Duration backoff, int maxAnswerBytes)
        implements WorkerConfig.Providers {}
