package dev.jobapi.worker.service;

import dev.jobapi.worker.config.WorkerConfig;
import dev.jobapi.worker.provider.HoldCause;
import dev.jobapi.worker.provider.ProviderOutcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.runtime.Startup;
import jakarta.inject.Singleton;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The worker's Prometheus metrics, named so an operator can guess them: {@code jobapi_attempts_total},
 * {@code jobapi_winner_elections_lost_total}, {@code jobapi_duplicate_applies_prevented_total},
 * {@code jobapi_provider_call_seconds}, {@code jobapi_tokens_total}. Every series of every configured
 * provider is registered at start-up, counters at zero, each with its help text, so an alert on a rare
 * event (an election lost) has a series before the first one; README's metric table lists the same
 * names and help texts ({@code MetricsTest} compares them).
 */
@Startup
@Singleton
public class WorkerMetrics {

    /** The outcomes {@link #attemptOutcome} is called with. */
    static final List<String> OUTCOMES = List.of("succeeded", "failed", "unknown", "quarantined", "apply_refused");

    private static final String ATTEMPTS = "jobapi.attempts";
    private static final String ATTEMPTS_HELP = "Attempts that reached an outcome, by provider and outcome";
    private static final String ELECTIONS_LOST = "jobapi.winner.elections.lost";
    private static final String ELECTIONS_LOST_HELP =
            "Succeeded attempts that lost the winner election to another attempt of the same job";
    private static final String TOKENS = "jobapi.tokens";
    private static final String TOKENS_HELP = "Tokens providers reported, by provider and kind (prompt, completion)";
    private static final String HELD = "jobapi.attempts.held";
    private static final String HELD_HELP = "Claims that held their attempt unclaimed and uncounted, by provider and"
            + " cause (paused, breaker, rate_limit, in_flight_cap)";
    private static final String PROVIDER_CALL = "jobapi.provider.call";
    private static final String PROVIDER_CALL_HELP = "Provider calls, from first send to the end of the answer";

    private final MeterRegistry registry;
    private final Counter duplicateAppliesPrevented;

    /**
     * Each series' meter once registered, by its name and tags: Micrometer's builder and registry
     * lookup on every increment were 2 % of the worker's CPU (bench/ANALYSIS.md).
     */
    private final Map<List<Object>, Counter> counters = new ConcurrentHashMap<>();

    private final Map<List<Object>, Timer> providerCalls = new ConcurrentHashMap<>();

    WorkerMetrics(MeterRegistry registry, WorkerConfig config) {
        this.registry = registry;
        duplicateAppliesPrevented = Counter.builder("jobapi.duplicate.applies.prevented")
                .description("Applies skipped because a redelivered or retried apply found the earlier one")
                .register(registry);
        for (String provider : config.provider().keySet()) {
            OUTCOMES.forEach(outcome -> attempts(provider, outcome));
            electionsLost(provider);
            for (HoldCause cause : HoldCause.values()) {
                held(provider, cause);
            }
            tokens(provider, "prompt");
            tokens(provider, "completion");
            for (Class<?> result : ProviderOutcome.class.getPermittedSubclasses()) {
                providerCall(provider, result);
            }
        }
    }

    private Counter attempts(String provider, String outcome) {
        return counters.computeIfAbsent(List.of(ATTEMPTS, provider, outcome), series -> Counter.builder(ATTEMPTS)
                .description(ATTEMPTS_HELP)
                .tag("provider", provider)
                .tag("outcome", outcome)
                .register(registry));
    }

    private Counter held(String provider, HoldCause cause) {
        return counters.computeIfAbsent(List.of(HELD, provider, cause), series -> Counter.builder(HELD)
                .description(HELD_HELP)
                .tag("provider", provider)
                .tag("cause", cause.wireName())
                .register(registry));
    }

    private Counter electionsLost(String provider) {
        return counters.computeIfAbsent(List.of(ELECTIONS_LOST, provider), series -> Counter.builder(ELECTIONS_LOST)
                .description(ELECTIONS_LOST_HELP)
                .tag("provider", provider)
                .register(registry));
    }

    private Counter tokens(String provider, String kind) {
        return counters.computeIfAbsent(List.of(TOKENS, provider, kind), series -> Counter.builder(TOKENS)
                .description(TOKENS_HELP)
                .tag("provider", provider)
                .tag("kind", kind)
                .register(registry));
    }

    /** The timer of the provider's calls that ended as {@code result}, a kind of {@link ProviderOutcome}. */
    private Timer providerCall(String provider, Class<?> result) {
        return providerCalls.computeIfAbsent(List.of(provider, result), series -> Timer.builder(PROVIDER_CALL)
                .description(PROVIDER_CALL_HELP)
                .tag("provider", provider)
                .tag("result", result.getSimpleName().toLowerCase(Locale.ROOT))
                .publishPercentileHistogram()
                .register(registry));
    }

    /** An attempt reached an outcome: one of {@link #OUTCOMES}. */
    public void attemptOutcome(String provider, String outcome) {
        attempts(provider, outcome).increment();
    }

    /** A claim held its attempt (docs/design.md, rules 19 and 21). */
    public void attemptHeld(String provider, HoldCause cause) {
        held(provider, cause).increment();
    }

    public void electionLost(String provider) {
        electionsLost(provider).increment();
    }

    /** A redelivered or retried apply found the earlier one (in applied_patch or on the target). */
    public void duplicateApplyPrevented() {
        duplicateAppliesPrevented.increment();
    }

    public void tokens(String provider, ProviderOutcome.Usage usage) {
        if (usage != null) {
            tokens(provider, "prompt").increment(usage.promptTokens());
            tokens(provider, "completion").increment(usage.completionTokens());
        }
    }

    public ProviderOutcome timeProviderCall(String provider, Supplier<ProviderOutcome> call) {
        Timer.Sample sample = Timer.start(registry);
        ProviderOutcome outcome = call.get();
        sample.stop(providerCall(provider, outcome.getClass()));
        return outcome;
    }
}
