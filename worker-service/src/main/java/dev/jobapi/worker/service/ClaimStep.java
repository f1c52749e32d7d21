package dev.jobapi.worker.service;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.budget.SpendBudgets;
import dev.jobapi.common.callback.CallbackInbox;
import dev.jobapi.common.job.Job;
import dev.jobapi.common.job.JobEventKind;
import dev.jobapi.common.job.JobEvents;
import dev.jobapi.common.job.JobState;
import dev.jobapi.worker.config.WorkerConfig;
import dev.jobapi.worker.fallback.AutomaticFallback;
import dev.jobapi.worker.provider.HoldCause;
import dev.jobapi.worker.provider.InFlightCaps;
import dev.jobapi.worker.provider.ProviderGate;
import dev.jobapi.worker.provider.ProviderRequest;
import dev.jobapi.worker.repository.AttemptWork;
import dev.jobapi.worker.service.AttemptSteps.Loaded;
import jakarta.inject.Singleton;
import jakarta.persistence.OptimisticLockException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import org.jboss.logging.Logger;

/**
 * The first step of a delivery: reads where the attempt stands and decides what this message is
 * for. A free starting attempt is claimed here, under a lease, with the provider request it will
 * send, so the call that follows needs nothing more from the database.
 */
@Singleton
public class ClaimStep {

    private static final Logger LOG = Logger.getLogger(ClaimStep.class);

    /**
     * Tokens a chat request adds around its one message (role and message markers), on top of the
     * prompt's own: a generous bound, so a reservation is never smaller than the call's cost.
     */
    static final int MESSAGE_FRAMING_TOKENS = 16;

    /** What the delivery goes on to do. */
    public enum Next {
        /** Nothing: a duplicate or late message. */
        NOTHING,
        /** Another worker holds a live lease: the message waits in the delay queue. */
        PARK,
        /** Claimed: call the provider with {@link Decision#request()}. */
        CALL,
        /** A stored result waits for the election. */
        ELECT,
        /** An elected winner waits for its apply. */
        APPLY,
        /** A provider's signed callback for an unknown attempt arrived: reconcile from it. */
        RECONCILE
    }

    /** The decision, the provider request when the attempt was claimed, and whether its call probes a half-open breaker. */
    public record Decision(Next next, ProviderRequest request, boolean probe) {
        static final Decision NOTHING = new Decision(Next.NOTHING, null, false);

        static Decision of(Next next) {
            return new Decision(next, null, false);
        }
    }

    private final AttemptWork work;
    private final AttemptOutcomes outcomes;
    private final JobEvents events;
    private final CallbackInbox callbacks;
    private final LeaseKeeper leases;
    private final ClaimConditions claimConditions;
    private final SpendBudgets spend;
    private final ProviderGate gate;
    private final InFlightCaps caps;
    private final AutomaticFallback fallback;
    private final WorkerConfig config;
    private final WorkerMetrics metrics;
    private final ObjectMapper mapper;
    private final String workerId;

    ClaimStep(
            AttemptWork work,
            AttemptOutcomes outcomes,
            JobEvents events,
            CallbackInbox callbacks,
            LeaseKeeper leases,
            ClaimConditions claimConditions,
            SpendBudgets spend,
            ProviderGate gate,
            InFlightCaps caps,
            AutomaticFallback fallback,
            WorkerConfig config,
            WorkerMetrics metrics,
            ObjectMapper mapper) {
        this.work = work;
        this.outcomes = outcomes;
        this.events = events;
        this.callbacks = callbacks;
        this.leases = leases;
        this.claimConditions = claimConditions;
        this.spend = spend;
        this.gate = gate;
        this.caps = caps;
        this.fallback = fallback;
        this.config = config;
        this.metrics = metrics;
        this.mapper = mapper;
        this.workerId = config.worker().idOrPid();
    }

    Decision decide(Loaded step, boolean redelivered) {
        Attempt attempt = step.attempt();
        Job job = step.job();
        JobEvents.Recorded delivery = events.record(
                job.id(),
                attempt.id(),
                redelivered ? JobEventKind.MESSAGE_REDELIVERED : JobEventKind.MESSAGE_DELIVERED,
                "attempt " + attempt.state().wireName() + ", worker " + workerId);
        switch (attempt.state()) {
            case SUCCEEDED:
                boolean unfinishedWinner = attempt.id().equals(job.winningAttemptId())
                        && !job.state().isTerminal();
                return Decision.of(unfinishedWinner ? Next.APPLY : Next.NOTHING);
            case UNKNOWN:
                // An operator's resolution (usage recorded, quarantine lifted) sends it on to the election.
                boolean resolved = work.outputStored(attempt.id()) && work.usageReported(attempt.id());
                if (resolved) {
                    return Decision.of(Next.ELECT);
                }
                // A provider's signed callback arrived: reconcile from it now rather than at the next round.
                return Decision.of(callbacks.find(attempt.id()).isPresent() ? Next.RECONCILE : Next.NOTHING);
            case QUARANTINED:
                // Held for an operator: only a release (to unknown) or a fail moves it on.
                LOG.debugf("Attempt %s is quarantined; it waits for an operator", attempt.id());
                return Decision.NOTHING;
            case FAILED, SUPERSEDED:
                LOG.debugf("Attempt %s is %s; duplicate or late message", attempt.id(), attempt.state());
                return Decision.NOTHING;
            case STARTING:
                break;
        }
        if (attempt.leaseOwner() == null) {
            if (job.state().isTerminal()) {
                attempt.lose("job was " + job.state().wireName() + " before the attempt started", step.now());
                return Decision.NOTHING;
            }
            if (job.pastDeadline(step.now())) {
                expire(step);
                return Decision.NOTHING;
            }
            ClaimConditions.Read conditions =
                    claimConditions.read(attempt.provider(), model(attempt), job.ownerId(), step.now());
            if (conditions.providerPaused()) {
                hold(step, HoldCause.PAUSED, "provider " + attempt.provider() + " is paused by an operator");
                return Decision.NOTHING;
            }
            // The budget first: an attempt its owner cannot pay for fails now, whatever the gate says,
            // and never takes a half-open breaker's probe from an attempt that would call. Behind the
            // gate, an open breaker held such attempts and the probe passed to one of them per round:
            // CI's SpendBudgetTest waited 190 rounds.
            String prompt = prompt(job);
            long promptTokensAtMost = prompt.getBytes(StandardCharsets.UTF_8).length + MESSAGE_FRAMING_TOKENS;
            SpendBudgets.Reserved reserved = reserve(step, promptTokensAtMost, conditions.spendTerms());
            if (reserved == null) {
                return Decision.NOTHING;
            }
            Optional<String> capped = caps.refusal(attempt.provider(), job.ownerId(), conditions.ownersSetCap());
            if (capped.isPresent()) {
                spend.release(job.ownerId(), reserved);
                holdForCap(step, capped.get());
                metrics.attemptHeld(attempt.provider(), HoldCause.IN_FLIGHT_CAP);
                return Decision.NOTHING;
            }
            ProviderGate.Verdict verdict = gate.verdict(
                    attempt.provider(),
                    attempt.id(),
                    promptTokensAtMost + maxTokens(attempt),
                    conditions.providerHealth());
            if (verdict instanceof ProviderGate.Held held) {
                spend.release(job.ownerId(), reserved);
                hold(step, held.cause(), held.reason());
                return Decision.NOTHING;
            }
            // A probe whose claim does not call (another worker's claim came first) is freed by the
            // gate's round once its attempt is not in flight.
            return claim(step, prompt, reserved, ((ProviderGate.Call) verdict).probe(), redelivered ? null : delivery);
        }
        return afterAnotherClaim(step);
    }

    /**
     * Reserves the call's most expensive outcome in the owner's money budgets (rule 20), or refuses
     * the attempt for them: null then, the attempt failed without a request.
     */
    private SpendBudgets.Reserved reserve(Loaded step, long promptTokensAtMost, SpendBudgets.Terms terms) {
        Attempt attempt = step.attempt();
        Job job = step.job();
        SpendBudgets.Reservation reservation = spend.reserve(
                job.ownerId(),
                attempt.provider(),
                model(attempt),
                promptTokensAtMost,
                maxTokens(attempt),
                step.now(),
                terms);
        if (reservation instanceof SpendBudgets.Refused refused) {
            refuseForSpend(step, refused.reason());
            return null;
        }
        if (reservation instanceof SpendBudgets.Unpriced unpriced) {
            refuseForSpend(step, unpriced.reason());
            return null;
        }
        return (SpendBudgets.Reserved) reservation;
    }

    /** The model the attempt's provider is configured to call. */
    private String model(Attempt attempt) {
        WorkerConfig.Provider settings = config.provider().get(attempt.provider());
        return settings == null ? "" : settings.model();
    }

    /** The most tokens the provider may answer with: its configured cap, sent with the request. */
    private int maxTokens(Attempt attempt) {
        WorkerConfig.Provider settings = config.provider().get(attempt.provider());
        return settings == null ? 0 : settings.maxTokens();
    }

    /**
     * The gate let the call go: claims the attempt with its reservation, or finds another worker's
     * claim. The claim's timeline row takes the place of a first delivery's row, which would say
     * only what the claim says (which worker); a redelivery's row stays, since it tells of a delivery
     * before.
     *
     * @param firstDelivery this delivery's row when it is the message's first delivery, else null
     */
    private Decision claim(
            Loaded step,
            String prompt,
            SpendBudgets.Reserved reserved,
            boolean probe,
            JobEvents.Recorded firstDelivery) {
        Attempt attempt = step.attempt();
        Job job = step.job();
        // The claim refuses an attempt with a stored answer, so the free attempt of the common case
        // is claimed without a read of its generation first.
        boolean startsTheJob = job.state() != JobState.RUNNING;
        AttemptWork.Claim claim = work.claim(
                attempt.id(), workerId, step.now(), config.worker().lease(), reserved, startsTheJob ? job : null);
        if (claim.claimed()) {
            if (startsTheJob) {
                if (!claim.jobStarted()) {
                    throw new OptimisticLockException("Job " + job.id() + " changed since this step loaded it");
                }
                step.jobStartedByTheClaim();
            }
            String claimed = "by " + workerId + ", request sent at " + step.now()
                    + (probe ? ", the probe of " + attempt.provider() + "'s circuit breaker" : "")
                    + (reserved.amountUsd() == null
                            ? ""
                            : ", " + reserved.amountUsd().toPlainString() + " USD reserved");
            if (firstDelivery != null) {
                firstDelivery.replaceWith(JobEventKind.ATTEMPT_CLAIMED, claimed);
            } else {
                events.record(job.id(), attempt.id(), JobEventKind.ATTEMPT_CLAIMED, claimed);
            }
            for (SpendBudgets.Standing window : reserved.pastSoftThreshold()) {
                events.record(
                        job.id(),
                        attempt.id(),
                        JobEventKind.BUDGET_THRESHOLD,
                        String.format(
                                "owner %s's %s past %d%%: %s USD spent, %s USD reserved of %s USD",
                                job.ownerId(),
                                window.describe(),
                                window.softPercent(),
                                window.spentUsd().toPlainString(),
                                window.reservedUsd().toPlainString(),
                                window.limitUsd().toPlainString()));
            }
            return new Decision(Next.CALL, request(step, prompt), probe);
        }
        spend.release(job.ownerId(), reserved);
        return afterAnotherClaim(step);
    }

    /** The attempt was claimed before this delivery (or just now, by another worker): what is left to do. */
    private Decision afterAnotherClaim(Loaded step) {
        Attempt attempt = step.attempt();
        Job job = step.job();
        if (work.outputStored(attempt.id())) {
            return Decision.of(Next.ELECT);
        }
        if (attempt.leaseOwner() == null) {
            return Decision.of(Next.PARK); // another worker claimed it since this step's load
        }
        if (work.leaseLive(attempt.id())) {
            events.record(
                    job.id(),
                    attempt.id(),
                    JobEventKind.MESSAGE_PARKED,
                    "lease of " + attempt.leaseOwner() + " is live");
            return Decision.of(Next.PARK);
        }
        outcomes.leaseLost(step);
        return Decision.NOTHING;
    }

    /**
     * The job's deadline passed before this attempt started (rule 18): it fails without a request,
     * and a job with nothing else open and nothing won ends cancelled, expired.
     */
    private void expire(Loaded step) {
        Job job = step.job();
        outcomes.fail(
                step, "the job's deadline " + job.deadline() + " passed before the attempt started; no request sent");
        if (outcomes.nothingElseOpenOrWon(step)) {
            job.expire(step.now());
            events.record(job.id(), null, JobEventKind.JOB_CANCELLED, "expired: deadline " + job.deadline());
        }
    }

    /**
     * An operator paused the provider (rule 19) or its health gate is shut (rule 21): the attempt
     * stays starting and unclaimed, its message acknowledged uncounted, until the resume or the gate
     * announces it again; or, when its job may fall back to a provider that can take it now, it is
     * superseded by an attempt there.
     */
    private void hold(Loaded step, HoldCause cause, String reason) {
        metrics.attemptHeld(step.attempt().provider(), cause);
        // Whether the job may fall back reads the job's other attempts: serialize with their changes.
        step.lockJob();
        if (fallback.afterHold(step.job(), step.attempt(), reason, step.now()).isEmpty()) {
            events.record(step.job().id(), step.attempt().id(), JobEventKind.ATTEMPT_HELD, reason);
        }
    }

    /**
     * A cap on calls in flight is reached: the attempt waits, unclaimed, for a free slot, which the
     * gate's round announces. Never a fallback: the provider is busy, not failing, and an owner's
     * cap holds every provider. Its timeline says so at most once a minute, however often it is
     * announced and held again.
     */
    private void holdForCap(Loaded step, String reason) {
        events.recordAtMostOncePer(
                Duration.ofMinutes(1), step.job().id(), step.attempt().id(), JobEventKind.ATTEMPT_HELD, reason);
    }

    /**
     * The call would not fit the owner's money budget, or cannot be priced (rule 20): the attempt fails
     * without a request, and a job with nothing else open waits for its owner with the reason.
     */
    private void refuseForSpend(Loaded step, String reason) {
        // Whether the job waits for its owner reads the job's other attempts: serialize with their failures.
        step.lockJob();
        outcomes.fail(step, reason + "; no request sent");
        outcomes.awaitOwnerIfNothingOpen(step);
    }

    /** What the provider is asked: the job's instruction, then its whole input. */
    private String prompt(Job job) {
        String prompt = JobInputFields.text(mapper, job.id(), job.input(), "prompt", "");
        // The input is any JSON object: besides the instruction it carries the context the caller sent
        // (the repository and base the patch is for, and whatever else), which the model needs too.
        return prompt + "\n\nJob input: " + job.input();
    }

    private ProviderRequest request(Loaded step, String prompt) {
        Attempt attempt = step.attempt();
        return new ProviderRequest(
                attempt.id(),
                attempt.requestKey(),
                attempt.provider(),
                prompt,
                step.now().plus(config.worker().callDeadline()),
                leases.guardFor(attempt.id()));
    }
}
