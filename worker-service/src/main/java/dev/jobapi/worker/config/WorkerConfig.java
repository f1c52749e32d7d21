package dev.jobapi.worker.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Optional;

/** Every setting of the worker-service, with its default and why it has that value. */
@ConfigMapping(prefix = "jobapi")
public interface WorkerConfig {

    Worker worker();

    Providers providers();

    Apply apply();

    Reconciler reconciler();

    /** How lost answers are looked up at the provider. */
    interface Reconciler {
        /** How often a worker looks for attempts to reconcile. */
        @WithDefault("30s")
        Duration interval();

        /** Give a slow provider this long after the send before asking it what happened. */
        @WithDefault("1m")
        Duration minAge();

        /**
         * Past this the provider no longer keeps the request (stored completions are kept 30 days);
         * the attempt stays unknown for a reviewer.
         */
        @WithDefault("7d")
        Duration maxAge();

        /** Attempts looked up per round. */
        @WithDefault("20")
        int batchSize();
    }

    /** How this worker claims attempts. */
    interface Worker {
        /** Names this process in attempt leases; defaults to host and pid. */
        Optional<String> id();

        /** The configured id, or pid@host. */
        default String idOrPid() {
            return id().orElse(ManagementFactory.getRuntimeMXBean().getName());
        }

        /**
         * How long a claim keeps other workers off an attempt. It must outlast the longest provider
         * call (max-sends x read-timeout plus backoff), or a live call would be declared unknown.
         */
        @WithDefault("5m")
        Duration lease();

        /**
         * A losing attempt's output is kept for diagnostics up to this size; a larger one is dropped
         * when it loses (its digest stays on the attempt). Diagnostics need the shape of an answer,
         * not megabytes of it.
         */
        @WithDefault("262144")
        int loserOutputMaxBytes();

        /** How long shutdown waits for attempts in flight before abandoning them unacked. */
        @WithDefault("30s")
        Duration shutdownGrace();
    }

    /** The OpenAI-compatible endpoint the named providers are reached at. */
    interface Providers {
        @WithDefault("http://127.0.0.1:8090")
        String baseUrl();

        /** API key, from the environment in production; the fake provider ignores it. */
        Optional<String> apiKey();

        /** A connect that takes longer than this was never sent, so it may be resent. */
        @WithDefault("2s")
        Duration connectTimeout();

        /**
         * Time to the first byte and, separately, for the whole stream. Past it the request was sent
         * and its fate is unknown: the attempt becomes unknown, never failed.
         */
        @WithDefault("60s")
        Duration readTimeout();

        /** DESIGN.md's decision table: at most three sends for 429, 5xx and never-sent failures. */
        @WithDefault("3")
        int maxSends();

        /** First backoff; doubled per resend, plus up to 100% jitter. */
        @WithDefault("500ms")
        Duration backoff();
    }

    /** Where a winning patch is applied. */
    interface Apply {
        /** {@code git} commits to a branch per job; {@code store} keeps the output for clients to fetch. */
        @WithDefault("git")
        String mode();

        Git git();

        /**
         * Mutation check only: derive the apply key from a per-call counter instead of the content.
         * The postmortem replay test must fail with this on; never enable it anywhere else.
         */
        @WithDefault("false")
        boolean perCallKeyMutation();

        /** The target repository of the git applier. */
        interface Git {
            /** Path of the repository; each job gets the branch {@code <branch-prefix><job id>}. */
            @WithDefault(".dev/demo-repo")
            String repository();

            @WithDefault("jobapi/")
            String branchPrefix();

            /** Used when the job input names no {@code baseRef}. */
            @WithDefault("main")
            String defaultBaseRef();
        }
    }
}
