package dev.jobapi.worker.service;

import dev.jobapi.worker.provider.ProviderOutcome;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.function.Supplier;

/**
 * The worker's Prometheus metrics, named so an operator can guess them: {@code jobapi_attempts_total},
 * {@code jobapi_winner_elections_lost_total}, {@code jobapi_duplicate_applies_prevented_total},
 * {@code jobapi_provider_call_seconds}, {@code jobapi_tokens_total}.
 */
@ApplicationScoped
public class WorkerMetrics {

    private final MeterRegistry registry;

    WorkerMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** An attempt reached an outcome: succeeded, failed, unknown, quarantined. */
    public void attemptOutcome(String provider, String outcome) {
        registry.counter("jobapi.attempts", "provider", provider, "outcome", outcome)
                .increment();
    }

    public void electionLost(String provider) {
        registry.counter("jobapi.winner.elections.lost", "provider", provider).increment();
    }

    /** A redelivered or retried apply found the earlier one (in applied_patch or on the target). */
    public void duplicateApplyPrevented() {
        registry.counter("jobapi.duplicate.applies.prevented").increment();
    }

    public void tokens(String provider, ProviderOutcome.Usage usage) {
        if (usage != null) {
            registry.counter("jobapi.tokens", "provider", provider, "kind", "prompt")
                    .increment(usage.promptTokens());
            registry.counter("jobapi.tokens", "provider", provider, "kind", "completion")
                    .increment(usage.completionTokens());
        }
    }

    public ProviderOutcome timeProviderCall(String provider, Supplier<ProviderOutcome> call) {
        Timer.Sample sample = Timer.start(registry);
        ProviderOutcome outcome = call.get();
        sample.stop(Timer.builder("jobapi.provider.call")
                .description("Provider calls, from first send to the end of the answer")
                .tag("provider", provider)
                .tag("result", outcome.getClass().getSimpleName().toLowerCase())
                .publishPercentileHistogram()
                .register(registry));
        return outcome;
    }
}
