package dev.jobapi.worker.fallback;

import dev.jobapi.common.acceptance.AcceptanceConfig;
import dev.jobapi.common.acceptance.AcceptanceRuns;
import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.attempt.AttemptRepository;
import dev.jobapi.common.job.Job;
import dev.jobapi.common.job.JobEventKind;
import dev.jobapi.common.job.JobEvents;
import dev.jobapi.common.provider.ProviderHealth;
import dev.jobapi.common.start.AttemptStarts;
import dev.jobapi.common.start.StartRefusal;
import dev.jobapi.worker.config.WorkerConfig;
import dev.jobapi.worker.repository.AttemptWork;
import jakarta.inject.Singleton;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Earned automatic fallback (docs/design.md, rules 11 and 12). After an attempt fails definitively
 * (never when its outcome is unknown), the job moves on to the next provider of its fallback list,
 * through the same transition rules and outbox as a manual request, but only to a provider whose
 * acceptance passed recently, only while the kill switch is on and the owner's daily budget has
 * room. Every refusal is recorded on the job.
 */
@Singleton
public class AutomaticFallback {

    private final AttemptRepository attempts;
    private final AttemptStarts starts;
    private final AcceptanceRuns acceptances;
    private final AcceptanceConfig acceptance;
    private final WorkerConfig config;
    private final JobEvents events;
    private final ProviderHealth health;
    private final AttemptWork work;

    AutomaticFallback(
            AttemptRepository attempts,
            AttemptStarts starts,
            AcceptanceRuns acceptances,
            AcceptanceConfig acceptance,
            WorkerConfig config,
            JobEvents events,
            ProviderHealth health,
            AttemptWork work) {
        this.health = health;
        this.work = work;
        this.attempts = attempts;
        this.starts = starts;
        this.acceptances = acceptances;
        this.acceptance = acceptance;
        this.config = config;
        this.events = events;
    }

    /**
     * Called in the transaction that moved {@code failed} to failed, with the job row locked, so two
     * deliveries cannot both start a fallback; the attempt's key (job, failed attempt) backs that up.
     * A job with no fallback list returns at once, in a plain transaction too; the decision itself
     * reads and starts attempts through the ORM, so a plain step runs again under JTA for it
     * ({@code AttemptSteps}).
     *
     * @return the new attempt, when one was started
     */
    public Optional<Attempt> afterFailure(Job job, Attempt failed, Instant now) {
        if (job.fallbackProviders().isEmpty()) {
            return Optional.empty();
        }
        // The step's failed attempt in place of its row as committed, which still shows it open.
        List<Attempt> jobAttempts = attempts.forJob(job.id()).stream()
                .map(stored -> stored.id().equals(failed.id()) ? failed : stored)
                .toList();
        Optional<StartRefusal> refusal = starts.refusal(job, jobAttempts);
        if (refusal.isPresent()
                && (refusal.get() instanceof StartRefusal.JobClosed
                        || refusal.get() instanceof StartRefusal.AttemptsOpen)) {
            // Nothing to fall back from: the job is settled, or another attempt may still produce a result.
            return Optional.empty();
        }
        Set<String> tried = jobAttempts.stream().map(Attempt::provider).collect(Collectors.toSet());
        List<String> candidates = job.fallbackProviders().stream()
                .filter(name -> !tried.contains(name))
                .toList();
        if (candidates.isEmpty()) {
            events.record(
                    job.id(),
                    failed.id(),
                    JobEventKind.FALLBACK_EXHAUSTED,
                    "every provider of the fallback list was tried");
            return Optional.empty();
        }
        if (refusal.isPresent()) {
            // The kill switch is off or the owner's budget is spent: the job says so and waits for its owner.
            events.record(
                    job.id(),
                    failed.id(),
                    JobEventKind.FALLBACK_REFUSED,
                    refusal.get().reason());
            return Optional.empty();
        }
        for (String provider : candidates) {
            Optional<String> providerRefusal = refusal(provider, now);
            if (providerRefusal.isPresent()) {
                events.record(
                        job.id(), failed.id(), JobEventKind.FALLBACK_REFUSED, provider + ": " + providerRefusal.get());
                continue;
            }
            Attempt next = starts.start(job.id(), provider, "automatic-fallback-after-" + failed.id(), null, now);
            events.record(
                    job.id(),
                    next.id(),
                    JobEventKind.FALLBACK_AUTOMATIC,
                    "provider " + provider + " after attempt " + failed.id() + " failed: " + failed.reason());
            return Optional.of(next);
        }
        return Optional.empty();
    }

    /**
     * Called in the claim's transaction, with the job row locked, when an operator's pause (rule 19)
     * or the provider's health gate (rule 21) holds {@code held}: a job whose fallback list names an untried provider that may take
     * it now moves there, the held attempt superseded by the new one. Otherwise the attempt stays
     * held, and nothing is recorded: it is asked again at each delivery.
     *
     * <p>As {@link #afterFailure}: at once for a job with no fallback list, whatever the transaction.
     *
     * @return the new attempt, when one was started
     */
    public Optional<Attempt> afterHold(Job job, Attempt held, String reason, Instant now) {
        if (job.fallbackProviders().isEmpty()) {
            return Optional.empty();
        }
        List<Attempt> jobAttempts = attempts.forJob(job.id());
        List<Attempt> others =
                jobAttempts.stream().filter(a -> !a.id().equals(held.id())).toList();
        // Only the held attempt may be open: another one may still produce a result.
        if (starts.refusal(job, others).isPresent()) {
            return Optional.empty();
        }
        Set<String> tried = jobAttempts.stream().map(Attempt::provider).collect(Collectors.toSet());
        Optional<String> target = job.fallbackProviders().stream()
                .filter(name -> !tried.contains(name))
                .filter(name -> refusal(name, now).isEmpty())
                .findFirst();
        if (target.isEmpty()) {
            return Optional.empty();
        }
        held.supersede(reason + "; moved to " + target.get() + " by automatic fallback", "automatic-fallback", now);
        events.record(job.id(), held.id(), JobEventKind.ATTEMPT_SUPERSEDED, held.reason());
        Attempt next = starts.start(job.id(), target.get(), "automatic-fallback-after-" + held.id(), null, now);
        events.record(
                job.id(),
                next.id(),
                JobEventKind.FALLBACK_AUTOMATIC,
                "provider " + target.get() + " after attempt " + held.id() + " was held: " + reason);
        return Optional.of(next);
    }

    /**
     * Why automatic fallback may not move to this provider: its configuration does not allow it,
     * it has not passed acceptance recently, an operator paused it, or its health gate holds its
     * calls. Empty when it may.
     */
    private Optional<String> refusal(String provider, Instant now) {
        WorkerConfig.Provider settings = config.provider().get(provider);
        if (settings == null) {
            return Optional.of("not configured in this worker");
        }
        if (!settings.automaticFallback()) {
            return Optional.of("jobapi.provider." + provider + ".automatic-fallback is false");
        }
        Optional<String> notAccepted = acceptances.refusal(provider, acceptance.freshness(), now);
        if (notAccepted.isPresent()) {
            return notAccepted;
        }
        if (work.providerPaused(provider)) {
            return Optional.of("paused by an operator");
        }
        ProviderHealth.Standing gate = health.standing(provider);
        if (!gate.open()) {
            return Optional.of(
                    gate.limitedUntil() != null
                            ? "holding calls until " + gate.limitedUntil() + " for the rate limit it announced"
                            : "its circuit breaker is " + gate.breaker().replace('_', ' '));
        }
        return Optional.empty();
    }
}
