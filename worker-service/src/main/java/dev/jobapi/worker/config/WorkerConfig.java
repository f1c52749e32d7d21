package dev.jobapi.worker.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/** Every setting of the worker-service, with its default and why it has that value. */
@ConfigMapping(prefix = "jobapi")
public interface WorkerConfig {

    Worker worker();

    Providers providers();

    ProviderGate providerGate();

    /**
     * The named providers, {@code jobapi.provider.<name>.*}, keyed by the name jobs and attempts
     * carry. None by default: the deployment configures them (local runs:
     * dev/config/worker-service.properties).
     */
    Map<String, Provider> provider();

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

        /** Attempts looked up per round, the least recently asked about first. */
        @WithDefault("20")
        int batchSize();

        /**
         * A job whose winner was elected this long ago and is still not completed lost its apply to
         * a crash with no message left to redeliver (the reconciler's own apply); the reconciler
         * resumes it. An apply takes milliseconds, so two minutes is far past any live one.
         */
        @WithDefault("2m")
        Duration stalledApplyAfter();

        /** The longest backoff between two resumes of an apply that keeps failing (transiently). */
        @WithDefault("30m")
        Duration applyRetryMax();

        /**
         * A starting attempt nobody claimed this long after it was made (or last announced) is announced
         * again: its message was lost (a queue deleted, a dead-lettered park). Far past the relay's
         * usual second; a second message is harmless, the claim is conditional.
         */
        @WithDefault("1m")
        Duration reannounceAfter();
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
         * How long a claim keeps other workers off an attempt. The worker renews it every third of
         * this while the provider call is in flight, so it bounds how soon a dead worker's attempt is
         * found (then declared unknown, never resent), not how long a call may take.
         */
        @WithDefault("1m")
        Duration lease();

        /**
         * The whole provider exchange (connect, headers, every body read, resends) ends by this long
         * after the claim; an answer not whole by then is unknown. Must exceed the read timeout.
         */
        @WithDefault("4m")
        Duration callDeadline();

        /**
         * A losing attempt's output is kept for diagnostics up to this size; a larger one is dropped
         * when it loses (its digest stays on the attempt). Diagnostics need the shape of an answer,
         * not megabytes of it.
         */
        @WithDefault("262144")
        int loserOutputMaxBytes();

        /**
         * Attempt messages worked at once by one worker process. Each mostly waits on its provider
         * and holds a database connection only for its short steps, so this is sized for waiting, not
         * for cores: at 4 the 30-minute soak's three workers sat at 1.7 load with every thread blocked
         * in a provider call and 3,700 messages queued (6 jobs/s against 12 offered).
         */
        @WithDefault("16")
        int concurrency();

        /** Messages the broker sends ahead (basic.qos): twice the concurrency keeps the pool busy. */
        @WithDefault("32")
        int prefetch();

        /** How long shutdown waits for attempts in flight before abandoning them unacked. */
        @WithDefault("30s")
        Duration shutdownGrace();

        /**
         * How long the consumer may receive nothing, with nothing in hand, before it subscribes again
         * (a subscription the broker silently stopped serving holds what it was sent, counted as
         * unacknowledged, until its connection closes). Long enough that a consumer between two
         * deliveries never qualifies.
         */
        @WithDefault("30s")
        Duration stallAfter();
    }

    /** One named provider: which API it speaks, where, with which model and key. */
    interface Provider {
        /** The wire format: {@code openai} (chat completions) or {@code anthropic} (messages). */
        Kind kind();

        /** The API root, without {@code /v1}: e.g. {@code https://api.anthropic.com}. */
        String baseUrl();

        /** The model sent in every request (the provider name is ours, never sent as a model). */
        String model();

        /** Sent as the provider's credential; set from the environment in production. */
        Optional<String> apiKey();

        /** Overrides {@code jobapi.providers.read-timeout} for this provider only. */
        Optional<Duration> readTimeout();

        /** Overrides {@code jobapi.providers.connect-timeout} for this provider only. */
        Optional<Duration> connectTimeout();

        /**
         * The cap on generated tokens, sent in every request (the Messages API requires it; in chat
         * completions it is {@code max_tokens}). A patch rarely needs more than this; the claim's money
         * reservation counts on it as the most the answer can cost (docs/design.md, rule 20).
         */
        @WithDefault("4096")
        int maxTokens();

        /** Whether automatic fallback may move a job to this provider; it has to earn that. */
        @WithDefault("false")
        boolean automaticFallback();

        /**
         * This provider's calls in flight at once, across workers (a provider's concurrency limit, or
         * a share of it); absent: no cap. Past it a claim is held, not failed (rule 21).
         */
        Optional<Integer> maxInFlight();

        /**
         * Calls this provider takes per UTC minute, across workers (its published request limit, or
         * this deployment's share of it); absent: no limit. Past it the provider's calls are held
         * until the next minute (rule 21).
         */
        Optional<Integer> requestsPerMinute();

        /**
         * Tokens this provider takes per UTC minute, across workers, each call counted at the most it
         * may use (its prompt's bound and {@link #maxTokens}, as providers count a request against
         * the limit when it arrives); absent: no limit.
         */
        Optional<Integer> tokensPerMinute();

        /** The provider APIs the worker has an adapter for. */
        enum Kind {
            /** OpenAI chat completions, streamed; also what the fake provider speaks at /v1/chat/completions. */
            OPENAI,
            /** Anthropic messages, streamed; the fake provider speaks it at /v1/messages. */
            ANTHROPIC
        }
    }

    /** Transport settings shared by every named provider (a provider may override the timeouts). */
    interface Providers {
        /** A connect that takes longer than this was never sent, so it may be resent. */
        @WithDefault("2s")
        Duration connectTimeout();

        /**
         * Time to the first byte and, separately, for the whole stream. Past it the request was sent
         * and its fate is unknown: the attempt becomes unknown, never failed.
         */
        @WithDefault("60s")
        Duration readTimeout();

        /**
         * The retry decision table (docs/design.md#retry-decision-table): at most three sends for
         * 429, 5xx and never-sent failures.
         */
        @WithDefault("3")
        int maxSends();

        /** First backoff; doubled per resend, plus up to 100% jitter. */
        @WithDefault("500ms")
        Duration backoff();

        /**
         * The most bytes one answer may take on the wire (a stream with its event framing, a stored
         * answer read back): past it the answer is failed and the connection closed. A patch of the
         * default max-tokens (4096) streams in well under 1 MiB of events; 4 MiB leaves room, and 16
         * attempts at once hold at most 64 MiB of answers, where without a bound one provider, or
         * anyone answering for an http:// base URL, could run the worker out of memory.
         */
        @WithDefault("4194304")
        int maxAnswerBytes();
    }

    /**
     * Each provider's health gate, shared by every worker (docs/design.md, rule 21): when its circuit
     * breaker opens, how long it stays open, how its probe is bounded, and how long an announced rate
     * limit may hold its calls.
     */
    interface ProviderGate {
        /**
         * Calls within the window before the fault share is judged: a few faults alone never open it.
         * Twenty, so that a provider failing a third of its calls (the chaos soak's mix) does not trip
         * it by chance, while an outage does within seconds at any real load.
         */
        @WithDefault("20")
        int minimumCalls();

        /** The share of the window's calls, in percent, that were the provider's faults, to open it. */
        @WithDefault("50")
        int faultPercent();

        /**
         * The window calls and faults are counted in; a call after it ends starts a new one. Short, so
         * that an outage beginning late in a busy window is not diluted by the healthy calls before it.
         */
        @WithDefault("10s")
        Duration window();

        /** How long an open breaker holds every call before its probe calls may go. */
        @WithDefault("15s")
        Duration openFor();

        /**
         * The calls a half-open breaker lets go and judges together: their faults reaching the fault
         * share of them all open it again, and the successes making that impossible close it. One
         * alone failed a third of the time at a provider failing a third of its calls, and held every
         * call for another open time each time (CI's soak: 774 attempts held at the end).
         */
        @WithDefault("5")
        int probeCalls();

        /**
         * A probe taken this long ago with no outcome recorded (its worker died, its claim was lost)
         * lets a held attempt probe in its place. Longer than a call may take (the call deadline).
         */
        @WithDefault("5m")
        Duration probeTimeout();

        /**
         * The longest a provider's announced rate limit (its {@code retry-after}, or the reset of a
         * remaining count of 0) holds its calls; a longer one is taken as this.
         */
        @WithDefault("10m")
        Duration longestLimit();

        /**
         * Every owner's calls in flight at once, across providers and workers, unless an operator set
         * the owner's own (owner_share); absent: no cap. Past it a claim is held like a shut gate.
         */
        Optional<Integer> ownerMaxInFlight();
    }

    /** Where a winning patch is applied. */
    interface Apply {
        /** {@code git} commits to a branch per job; {@code store} keeps the output for clients to fetch. */
        @WithDefault("git")
        String mode();

        Git git();

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
