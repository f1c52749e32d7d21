package dev.jobapi.api.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.List;

/** Every setting of the api-service, with its default and why it has that value. */
@ConfigMapping(prefix = "jobapi")
public interface JobApiConfig {

    Intake intake();

    Outbox outbox();

    Providers providers();

    /** Limits on what a client may send. */
    interface Intake {
        /** 1 MiB: a prompt plus repository context fits; anything larger is a mistake or an attack. */
        @WithDefault("1048576")
        int maxBodyBytes();

        /** Deeper nesting than this is never a real job input and costs stack to canonicalise. */
        @WithDefault("32")
        int maxNestingDepth();
    }

    /** The relay that moves committed outbox rows to RabbitMQ. */
    interface Outbox {
        /**
         * The relay also wakes right after each commit in this replica; the poll only picks up rows
         * that other (possibly crashed) replicas left behind, so one second is plenty.
         */
        @WithDefault("1s")
        Duration pollInterval();

        /** Rows claimed per round; bounded so one replica's lock set stays small. */
        @WithDefault("100")
        int batchSize();

        /** How long to wait for a broker confirm before the round gives up and retries the row later. */
        @WithDefault("10s")
        Duration confirmTimeout();
    }

    /** The providers a client may name; the worker holds how to reach each one. */
    interface Providers {
        @WithDefault("fake-a,fake-b")
        List<String> names();

        /** Used when a job names no provider. */
        @WithDefault("fake-a")
        String defaultProvider();
    }
}
