package dev.jobapi.worker.service;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jobapi.common.apply.ApplyKey;
import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.attempt.AttemptRepository;
import dev.jobapi.common.attempt.AttemptState;
import dev.jobapi.common.attempt.Generation;
import dev.jobapi.common.attempt.UsageSource;
import dev.jobapi.common.callback.ProviderCallbacks;
import dev.jobapi.common.digest.Sha256;
import dev.jobapi.common.job.Job;
import dev.jobapi.common.job.JobEvents;
import dev.jobapi.common.job.JobRepository;
import dev.jobapi.common.job.JobState;
import dev.jobapi.common.message.AttemptMessage;
import dev.jobapi.worker.apply.Applier;
import dev.jobapi.worker.apply.ApplyRefused;
import dev.jobapi.worker.apply.ApplyTarget;
import dev.jobapi.worker.config.WorkerConfig;
import dev.jobapi.worker.fallback.AutomaticFallback;
import dev.jobapi.worker.provider.ProviderOutcome;
import dev.jobapi.worker.provider.ProviderRegistry;
import dev.jobapi.worker.provider.ProviderRequest;
import dev.jobapi.worker.repository.AttemptWork;
import io.quarkus.narayana.jta.QuarkusTransaction;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import java.time.Clock;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import org.jboss.logging.Logger;

/**
 * What the worker does with one attempt message. Every step is its own committed transaction and
 * reads the state the previous step left, so a redelivery at any point resumes where the last
 * commit stopped: claim, call the provider once, store the generation and usage, elect the winner
 * by compare-and-swap, apply exactly once, complete the job.
 */
@ApplicationScoped
public class AttemptPipeline {

    private static final Logger LOG = Logger.getLogger(AttemptPipeline.class);

    /** What the consumer should do with the message once {@link #process} returns. */
    public enum Disposition {
        /** Every step this message asked for is committed: ack it. */
        DONE,
        /** Another worker holds a live lease: park the message in the delay queue, then ack it. */
        PARK
    }

    private enum Next {
        NOTHING,
        PARK,
        CALL,
        ELECT,
        APPLY,
        RECONCILE
    }

    private final EntityManager em;
    private final JobRepository jobs;
    private final AttemptRepository attempts;
    private final AttemptWork work;
    private final ProviderRegistry providers;
    private final Applier applier;
    private final ApplyKeys applyKeys;
    private final CrashPoints crashPoints;
    private final WorkerConfig config;
    private final ObjectMapper mapper;
    private final JobEvents events;
    private final ProviderCallbacks callbacks;
    private final AutomaticFallback fallback;
    private final LeaseKeeper leases;
    private final WorkerMetrics metrics;
    private final Clock clock;
    private final String workerId;

    AttemptPipeline(
            EntityManager em,
            JobRepository jobs,
            AttemptRepository attempts,
            AttemptWork work,
            ProviderRegistry providers,
            Applier applier,
            ApplyKeys applyKeys,
            CrashPoints crashPoints,
            WorkerConfig config,
            ObjectMapper mapper,
            JobEvents events,
            ProviderCallbacks callbacks,
            AutomaticFallback fallback,
            LeaseKeeper leases,
            WorkerMetrics metrics,
            Clock clock) {
        this.em = em;
        this.jobs = jobs;
        this.attempts = attempts;
        this.work = work;
        this.providers = providers;
        this.applier = applier;
        this.applyKeys = applyKeys;
        this.crashPoints = crashPoints;
        this.config = config;
        this.mapper = mapper;
        this.events = events;
        this.callbacks = callbacks;
        this.fallback = fallback;
        this.leases = leases;
        this.metrics = metrics;
        this.clock = clock;
        this.workerId = config.worker().idOrPid();
    }

    /**
     * Works on one delivery of an attempt message.
     *
     * @param redelivered the broker's flag: this message was delivered before (crash, nack, replay)
     */
    public Disposition process(AttemptMessage message, boolean redelivered) {
        UUID attemptId = message.attemptId();
        Next next = QuarkusTransaction.requiringNew().call(() -> decide(attemptId, redelivered));
        switch (next) {
            case NOTHING:
                return Disposition.DONE;
            case PARK:
                return Disposition.PARK;
            case RECONCILE:
                reconcile(attemptId);
                return Disposition.DONE;
            case CALL:
                ProviderRequest request = QuarkusTransaction.requiringNew().call(() -> providerRequest(attemptId));
                // The one provider call of this attempt; nothing below ever calls it again.
                ProviderOutcome outcome = leases.whileHeld(
                        attemptId,
                        () -> metrics.timeProviderCall(
                                request.provider(),
                                () -> providers.forName(request.provider()).generate(request)));
                if (!QuarkusTransaction.requiringNew().call(() -> record(attemptId, outcome))) {
                    return Disposition.DONE;
                }
                // fall through: a stored result goes on to the election
            case ELECT:
                if (!QuarkusTransaction.requiringNew().call(() -> elect(attemptId))) {
                    return Disposition.DONE;
                }
                // fall through: the winner is applied
            case APPLY:
                apply(attemptId);
                return Disposition.DONE;
            default:
                throw new IllegalStateException("Unhandled step " + next);
        }
    }

    /** Reads the attempt and decides the next step; claims it when it is free. */
    private Next decide(UUID attemptId, boolean redelivered) {
        Attempt attempt = attempts.findById(attemptId);
        if (attempt == null) {
            LOG.warnf("Attempt %s does not exist; acking the message as a no-op", attemptId);
            return Next.NOTHING;
        }
        // Lock the job first, as the API does, then re-read the attempt under that lock.
        Job job = jobs.findForUpdate(attempt.jobId()).orElseThrow();
        em.refresh(attempt);
        Instant now = clock.instant();
        events.record(
                job.id(),
                attemptId,
                redelivered ? "message.redelivered" : "message.delivered",
                "attempt " + attempt.state().wireName() + ", worker " + workerId);
        switch (attempt.state()) {
            case SUCCEEDED:
                boolean unfinishedWinner =
                        attemptId.equals(job.winningAttemptId()) && !job.state().isTerminal();
                return unfinishedWinner ? Next.APPLY : Next.NOTHING;
            case UNKNOWN:
                // An operator's resolution (usage recorded, quarantine lifted) sends it on to the election.
                boolean resolved = !attempt.quarantined()
                        && attempts.generation(attemptId).isPresent()
                        && attempts.usage(attemptId)
                                .filter(u -> u.source() == UsageSource.PROVIDER_REPORTED)
                                .isPresent();
                if (resolved) {
                    return Next.ELECT;
                }
                // A provider's signed callback arrived: reconcile from it now rather than at the next round.
                return callbacks.find(attemptId).isPresent() ? Next.RECONCILE : Next.NOTHING;
            case FAILED, SUPERSEDED:
                LOG.debugf("Attempt %s is %s; duplicate or late message", attemptId, attempt.state());
                return Next.NOTHING;
            case STARTING:
                break;
        }
        if (attempts.generation(attemptId).isPresent()) {
            return Next.ELECT;
        }
        if (attempt.leaseOwner() == null) {
            if (job.state().isTerminal()) {
                attempt.lose("job was " + job.state().wireName() + " before the attempt started", now);
                return Next.NOTHING;
            }
            if (!work.claim(attemptId, workerId, now, config.worker().lease())) {
                return Next.PARK;
            }
            job.start(now);
            events.record(job.id(), attemptId, "attempt.claimed", "by " + workerId + ", request sent at " + now);
            return Next.CALL;
        }
        if (work.leaseLive(attemptId)) {
            events.record(job.id(), attemptId, "message.parked", "lease of " + attempt.leaseOwner() + " is live");
            return Next.PARK;
        }
        declareLeaseLost(job, attempt, now);
        return Next.NOTHING;
    }

    /**
     * The sweep's way in for a claimed attempt whose lease ran out with nothing stored and no message
     * left to find it: the same move a redelivery makes. Re-checked under the job's lock.
     */
    public void expireLease(UUID attemptId) {
        QuarkusTransaction.requiringNew().run(() -> {
            Attempt attempt = attempts.findById(attemptId);
            Job job = jobs.findForUpdate(attempt.jobId()).orElseThrow();
            em.refresh(attempt);
            boolean stillStranded = attempt.state() == AttemptState.STARTING
                    && attempt.leaseOwner() != null
                    && attempts.generation(attemptId).isEmpty()
                    && !work.leaseLive(attemptId);
            if (stillStranded) {
                declareLeaseLost(job, attempt, clock.instant());
            }
        });
    }

    /** The lease ran out and nothing was stored: the provider may have the request. Never resend. */
    private void declareLeaseLost(Job job, Attempt attempt, Instant now) {
        String reason = "lease of " + attempt.leaseOwner() + " expired with no stored result;"
                + " the provider may have the request";
        attempt.markUnknown(reason, now);
        metrics.attemptOutcome(attempt.provider(), "unknown");
        events.record(job.id(), attempt.id(), "attempt.unknown", reason);
        requireReview(job, attempt.id(), reason, now);
    }

    /**
     * The sweep's way in for an open attempt whose output and provider-reported usage are stored but
     * that never reached the election (the election failed after the store, or the result arrived
     * after the attempt became unknown): elect it, then apply the winner.
     */
    public void electStored(UUID attemptId) {
        if (QuarkusTransaction.requiringNew().call(() -> elect(attemptId))) {
            apply(attemptId);
        }
    }

    /**
     * Reconciliation (DESIGN.md rule 5): asks the provider what became of an attempt whose answer
     * was lost. A found result is stored like any other and goes through the same election and
     * apply; for an attempt that was superseded meanwhile it is recorded (output and usage: no
     * silent spend) and never applied. Nothing found: the attempt stays as it is.
     *
     * @return true when a result was found and recorded
     */
    public boolean reconcile(UUID attemptId) {
        record Candidate(String provider, String remoteId) {}
        Candidate candidate = QuarkusTransaction.requiringNew().call(() -> {
            Attempt attempt = attempts.findById(attemptId);
            return attempt == null ? null : new Candidate(attempt.provider(), attempt.remoteId());
        });
        if (candidate == null) {
            return false;
        }
        Optional<ProviderOutcome> found = fromCallback(attemptId)
                .map(ProviderOutcome.class::cast)
                .or(() -> providers.forName(candidate.provider()).lookup(attemptId, candidate.remoteId()));
        if (found.isEmpty()) {
            return false;
        }
        if (found.get() instanceof ProviderOutcome.Failed failed) {
            QuarkusTransaction.requiringNew().run(() -> recordReconciledFailure(attemptId, failed));
            return true;
        }
        ProviderOutcome.Completed completed = (ProviderOutcome.Completed) found.get();
        boolean electable = QuarkusTransaction.requiringNew().call(() -> recordReconciled(attemptId, completed));
        if (electable && QuarkusTransaction.requiringNew().call(() -> elect(attemptId))) {
            apply(attemptId);
        }
        return true;
    }

    /** A verified callback the provider pushed for this attempt, read like a lookup's answer. */
    private Optional<ProviderOutcome.Completed> fromCallback(UUID attemptId) {
        return QuarkusTransaction.requiringNew()
                .call(() -> callbacks.find(attemptId))
                .map(callback -> new ProviderOutcome.Completed(
                        callback.remoteId(),
                        callback.output(),
                        callback.promptTokens() == null
                                ? null
                                : new ProviderOutcome.Usage(callback.promptTokens(), callback.completionTokens())));
    }

    /**
     * The provider's stored answer was no answer (cut off at the output limit): its usage goes to the
     * ledger (no silent spend) and a still-unknown attempt fails with the reason; the job then waits
     * for its owner like after any failure.
     */
    private void recordReconciledFailure(UUID attemptId, ProviderOutcome.Failed failed) {
        Attempt attempt = attempts.findById(attemptId);
        Job job = jobs.findForUpdate(attempt.jobId()).orElseThrow();
        em.refresh(attempt);
        if (attempts.usage(attemptId).isPresent()) {
            return; // reconciled already
        }
        Instant now = clock.instant();
        work.recordUsage(attemptId, job.ownerId(), attempt.provider(), failed.usage(), now);
        metrics.tokens(attempt.provider(), failed.usage());
        events.record(
                job.id(),
                attemptId,
                "attempt.reconciled",
                "provider has " + failed.remoteId() + ": " + failed.reason());
        events.record(job.id(), attemptId, "usage.recorded", describe(failed.usage()));
        if (attempt.state() == AttemptState.UNKNOWN && !attempt.quarantined()) {
            attempt.fail(failed.reason(), now);
            metrics.attemptOutcome(attempt.provider(), "failed");
            events.record(job.id(), attemptId, "attempt.failed", failed.reason());
            if (!job.state().isTerminal()) {
                job.requireReview("attempt " + attemptId + " failed: " + failed.reason(), now);
            }
        }
    }

    private boolean recordReconciled(UUID attemptId, ProviderOutcome.Completed completed) {
        Attempt attempt = attempts.findById(attemptId);
        Job job = jobs.findForUpdate(attempt.jobId()).orElseThrow();
        em.refresh(attempt);
        if (attempts.usage(attemptId).isPresent()) {
            return false; // reconciled already, by another worker or an earlier round
        }
        Instant now = clock.instant();
        String digest = Sha256.prefixed(completed.patch());
        work.storeGeneration(attemptId, completed.patch(), digest, now);
        work.recordUsage(attemptId, job.ownerId(), attempt.provider(), completed.usage(), now);
        metrics.tokens(attempt.provider(), completed.usage());
        events.record(
                job.id(), attemptId, "attempt.reconciled", "provider has " + completed.remoteId() + ", " + digest);
        events.record(job.id(), attemptId, "usage.recorded", describe(completed.usage()));
        if (attempt.state() != AttemptState.UNKNOWN || attempt.quarantined()) {
            return false; // superseded meanwhile: recorded, never applied
        }
        attempt.recordRemoteId(completed.remoteId(), now);
        attempt.recordOutput(digest, now);
        if (completed.usage() == null) {
            attempt.quarantine("provider reported no usage; held until reconciled", now);
            events.record(job.id(), attemptId, "attempt.quarantined", "provider reported no usage");
            return false;
        }
        return true;
    }

    private ProviderRequest providerRequest(UUID attemptId) {
        Attempt attempt = attempts.findById(attemptId);
        Job job = jobs.findById(attempt.jobId());
        JsonNode input = input(job);
        // The provider name travels in the prompt too, so a scripted fake can tell attempts apart.
        String prompt =
                input.path("prompt").asText("") + "\n\nJob input: " + job.input() + "\nProvider: " + attempt.provider();
        return new ProviderRequest(
                attemptId,
                attempt.requestKey(),
                attempt.provider(),
                prompt,
                clock.instant().plus(config.worker().callDeadline()),
                leases.guardFor(attemptId));
    }

    /**
     * Stores what the provider said. Output and usage are kept whatever happened to the attempt in
     * the meantime (no silent spend); only a still-starting attempt changes state.
     *
     * @return true when a usable result is stored and the attempt goes on to the election
     */
    private boolean record(UUID attemptId, ProviderOutcome outcome) {
        Attempt attempt = attempts.findById(attemptId);
        Job job = jobs.findForUpdate(attempt.jobId()).orElseThrow();
        em.refresh(attempt);
        Instant now = clock.instant();
        boolean starting = attempt.state() == AttemptState.STARTING;
        // An attempt marked unknown while its call was still running (lease lost) takes its result too.
        boolean awaited = starting || attempt.state() == AttemptState.UNKNOWN && !attempt.quarantined();
        if (awaited && outcome.remoteId() != null) {
            attempt.recordRemoteId(outcome.remoteId(), now);
        }
        if (outcome instanceof ProviderOutcome.Completed completed) {
            String digest = Sha256.prefixed(completed.patch());
            work.storeGeneration(attemptId, completed.patch(), digest, now);
            work.recordUsage(attemptId, job.ownerId(), attempt.provider(), completed.usage(), now);
            metrics.tokens(attempt.provider(), completed.usage());
            events.record(job.id(), attemptId, "generation.stored", digest + ", remote id " + completed.remoteId());
            events.record(job.id(), attemptId, "usage.recorded", describe(completed.usage()));
            if (!awaited) {
                LOG.infof("Attempt %s is %s; its late result is stored, never applied", attemptId, attempt.state());
                return false;
            }
            attempt.recordOutput(digest, now);
            if (completed.usage() == null) {
                attempt.quarantine("provider reported no usage; held until reconciled", now);
                metrics.attemptOutcome(attempt.provider(), "quarantined");
                events.record(job.id(), attemptId, "attempt.quarantined", "provider reported no usage");
                requireReview(job, attemptId, "usage missing, quarantined", now);
                return false;
            }
            return true;
        }
        if (outcome instanceof ProviderOutcome.Unknown unknown) {
            if (starting) {
                attempt.markUnknown(unknown.reason(), now);
                metrics.attemptOutcome(attempt.provider(), "unknown");
                events.record(job.id(), attemptId, "attempt.unknown", unknown.reason());
                requireReview(job, attemptId, unknown.reason(), now);
            }
            return false;
        }
        ProviderOutcome.Failed failed = (ProviderOutcome.Failed) outcome;
        if (failed.usage() != null) {
            work.recordUsage(attemptId, job.ownerId(), attempt.provider(), failed.usage(), now);
            metrics.tokens(attempt.provider(), failed.usage());
            events.record(job.id(), attemptId, "usage.recorded", describe(failed.usage()));
        } else if (failed.usageUnknown()) {
            work.recordUsage(attemptId, job.ownerId(), attempt.provider(), null, now);
            events.record(job.id(), attemptId, "usage.recorded", describe(null));
        }
        if (starting) {
            attempt.fail(failed.reason(), now);
            metrics.attemptOutcome(attempt.provider(), "failed");
            events.record(job.id(), attemptId, "attempt.failed", failed.reason());
            fallback.afterFailure(job, attempt, now);
        }
        return false;
    }

    private void requireReview(Job job, UUID attemptId, String reason, Instant now) {
        if (!job.state().isTerminal()) {
            job.requireReview("attempt " + attemptId + ": " + reason, now);
            events.record(job.id(), attemptId, "job.needs_review", reason);
        }
    }

    private static String describe(ProviderOutcome.Usage usage) {
        return usage == null
                ? "source unknown: the provider reported nothing"
                : "provider_reported: " + usage.promptTokens() + " prompt + " + usage.completionTokens()
                        + " completion tokens";
    }

    /**
     * One winner (DESIGN.md rule 6): compare-and-swap on the job's version. The loser is superseded,
     * its output kept and never applied.
     *
     * @return true when this attempt is the job's winner and its apply is still to do
     */
    private boolean elect(UUID attemptId) {
        Attempt attempt = attempts.findById(attemptId);
        Job job = jobs.findForUpdate(attempt.jobId()).orElseThrow();
        em.refresh(attempt);
        Instant now = clock.instant();
        boolean resolvedUnknown = attempt.state() == AttemptState.UNKNOWN && !attempt.quarantined();
        if (resolvedUnknown && attempt.outputDigest() == null) {
            Optional<Generation> stored = attempts.generation(attemptId);
            if (stored.isEmpty()) {
                return false; // nothing to elect yet
            }
            attempt.recordOutput(stored.get().outputDigest(), now);
        }
        if (attempt.state() != AttemptState.STARTING && !resolvedUnknown) {
            return attempt.state() == AttemptState.SUCCEEDED
                    && attemptId.equals(job.winningAttemptId())
                    && !job.state().isTerminal();
        }
        if (job.state().isTerminal() || job.winningAttemptId() != null) {
            String reason = job.winningAttemptId() != null
                    ? "attempt " + job.winningAttemptId() + " won the job"
                    : "job was " + job.state().wireName() + " when this result arrived";
            lose(job, attempt, reason, now);
            return false;
        }
        if (!work.electWinner(job.id(), job.version(), attemptId, now)) {
            LOG.debugf("Attempt %s lost the election on job %s", attemptId, job.id());
            lose(job, attempt, "another attempt won or the job changed", now);
            return false;
        }
        attempt.succeed(now);
        metrics.attemptOutcome(attempt.provider(), "succeeded");
        events.record(job.id(), attemptId, "winner.elected", "output " + attempt.outputDigest());
        return true;
    }

    private void lose(Job job, Attempt attempt, String reason, Instant now) {
        attempt.lose(reason, now);
        metrics.electionLost(attempt.provider());
        long dropped = work.dropOversizedOutput(attempt.id(), config.worker().loserOutputMaxBytes());
        events.record(
                job.id(),
                attempt.id(),
                "attempt.lost",
                reason + (dropped > 0 ? "; output of " + dropped + " bytes dropped (over the bound)" : "; output kept")
                        + ", never applied");
    }

    /**
     * Applies an elected winner whose apply a crash stopped with no message left to redeliver; the
     * apply reads applied_patch and the target first, so resuming one that finished changes nothing.
     */
    public void resumeApply(UUID attemptId) {
        apply(attemptId);
    }

    /**
     * Exactly-once apply (DESIGN.md rule 7). The key is reserved in applied_patch first; a key that
     * exists already means applied (success) or pending (outcome unknown: ask the target first).
     */
    private void apply(UUID attemptId) {
        record Plan(ApplyKey key, ApplyTarget target, byte[] patch, boolean alreadyApplied) {}
        Plan plan = QuarkusTransaction.requiringNew().call(() -> {
            Attempt attempt = attempts.findById(attemptId);
            Job job = jobs.findById(attempt.jobId());
            if (!attemptId.equals(job.winningAttemptId()) || job.state().isTerminal()) {
                return null;
            }
            Generation generation = attempts.generation(attemptId).orElseThrow();
            ApplyTarget target = new ApplyTarget(
                    job.id(),
                    attemptId,
                    input(job).path("baseRef").asText(config.apply().git().defaultBaseRef()));
            String scope = applier.scope(target);
            ApplyKey key = applyKeys.keyFor(job.id(), generation.patch(), scope);
            boolean reserved = work.reserveApply(key, job.id(), attemptId, scope, clock.instant());
            boolean applied =
                    !reserved && work.applyStatus(key).filter("applied"::equals).isPresent();
            events.record(
                    job.id(),
                    attemptId,
                    reserved ? "apply.reserved" : "apply.key_exists",
                    "key " + key
                            + (reserved ? ", scope " + scope : applied ? ", already applied" : ", outcome unknown"));
            return new Plan(key, target, generation.patch(), applied);
        });
        if (plan == null) {
            return;
        }
        String targetRef = null;
        boolean foundOnTarget = false;
        if (!plan.alreadyApplied()) {
            var earlier = applier.findApplied(plan.key(), plan.target());
            foundOnTarget = earlier.isPresent();
            try {
                targetRef = earlier.orElseGet(() -> applier.apply(plan.key(), plan.patch(), plan.target()));
            } catch (ApplyRefused refused) {
                QuarkusTransaction.requiringNew().run(() -> refuseApply(plan.key(), attemptId, refused.getMessage()));
                return;
            }
            crashPoints.hit(CrashPoints.Point.AFTER_APPLY_BEFORE_ACK);
        }
        if (plan.alreadyApplied() || foundOnTarget) {
            metrics.duplicateApplyPrevented();
        }
        String ref = targetRef;
        boolean found = foundOnTarget;
        QuarkusTransaction.requiringNew().run(() -> {
            UUID jobId = plan.target().jobId();
            if (ref != null) {
                work.markApplied(plan.key(), ref, clock.instant());
                events.record(
                        jobId,
                        attemptId,
                        found ? "apply.found_on_target" : "apply.done",
                        "key " + plan.key() + ", target " + ref);
            }
            Job job = jobs.findForUpdate(jobId).orElseThrow();
            if (job.state() != JobState.COMPLETED) {
                job.complete(clock.instant());
                events.record(jobId, attemptId, "job.completed", null);
            }
        });
    }

    /**
     * The target refused the winner's patch for good. Trying again would change nothing, so the win
     * is released: the attempt fails with the target's reason, its apply reservation goes (nothing
     * was applied under it), and the job waits for its owner to ask for another attempt or cancel.
     */
    private void refuseApply(ApplyKey key, UUID attemptId, String reason) {
        Attempt attempt = attempts.findById(attemptId);
        Job job = jobs.findForUpdate(attempt.jobId()).orElseThrow();
        em.refresh(attempt);
        if (!attemptId.equals(job.winningAttemptId()) || job.state().isTerminal()) {
            return;
        }
        Instant now = clock.instant();
        String stated = "apply refused by the target: " + reason;
        work.releaseRefusedApply(key);
        attempt.failApply(stated, now);
        job.releaseRefusedWinner("attempt " + attemptId + ": " + stated, now);
        metrics.attemptOutcome(attempt.provider(), "apply_refused");
        events.record(job.id(), attemptId, "apply.refused", reason);
        events.record(job.id(), attemptId, "job.needs_review", stated);
    }

    private JsonNode input(Job job) {
        try {
            return mapper.readTree(job.input());
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("Stored input of job " + job.id() + " is not JSON", e);
        }
    }
}
