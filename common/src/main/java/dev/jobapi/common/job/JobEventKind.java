package dev.jobapi.common.job;

import com.fasterxml.jackson.annotation.JsonValue;

/**
 * Every kind of entry on a job's timeline, the one catalogue both services record from. The wire
 * name is what {@code job_event.kind} stores and the timeline shows; the chaos checker and the bench
 * SQL read these strings, so a wire name never changes once written.
 */
public enum JobEventKind {
    /** Intake made the job (its key and owner). */
    JOB_CREATED("job.created"),
    /** The same key and body came again: the existing job was answered (at most once a minute). */
    JOB_REPLAYED("job.replayed"),
    /** The owner, a reviewer or an operator cancelled the job. */
    JOB_CANCELLED("job.cancelled"),
    /** The job waits for a reviewer or its owner; the detail says why. */
    JOB_NEEDS_REVIEW("job.needs_review"),
    /** The winner's patch landed on the target; the job is completed. */
    JOB_COMPLETED("job.completed"),
    /** A new attempt was made (intake's first, or a request for another provider). */
    ATTEMPT_REQUESTED("attempt.requested"),
    /** The same attempt request (key and body) came again: its attempt was answered. */
    ATTEMPT_REPLAYED("attempt.replayed"),
    /** A reviewer replaced an open attempt, with a reason. */
    ATTEMPT_SUPERSEDED("attempt.superseded"),
    /** A worker took the attempt under a lease and is about to send it. */
    ATTEMPT_CLAIMED("attempt.claimed"),
    /**
     * The provider's health gate holds the attempt, unclaimed (an open circuit breaker, a rate limit
     * the provider announced); the detail says which and until when.
     */
    ATTEMPT_HELD("attempt.held"),
    /** The provider may have the request; what it did is not known. */
    ATTEMPT_UNKNOWN("attempt.unknown"),
    /** The provider answered without usage: the attempt is held for an operator. */
    ATTEMPT_QUARANTINED("attempt.quarantined"),
    /** The attempt failed (the provider, the stream, the target or an operator). */
    ATTEMPT_FAILED("attempt.failed"),
    /** Another attempt won or the job closed: this one's output is kept, never applied. */
    ATTEMPT_LOST("attempt.lost"),
    /** Reconciliation found what the provider did with an unknown attempt. */
    ATTEMPT_RECONCILED("attempt.reconciled"),
    /** A worker received the attempt's message for the first time. */
    MESSAGE_DELIVERED("message.delivered"),
    /** The attempt's message came again (a redelivery, a replay). */
    MESSAGE_REDELIVERED("message.redelivered"),
    /** Another worker's lease is live: the message waits in the delay queue. */
    MESSAGE_PARKED("message.parked"),
    /** The provider's answer is stored, before anything else happens with it. */
    GENERATION_STORED("generation.stored"),
    /** The ledger has what the provider reported this attempt spent (or that it reported nothing). */
    USAGE_RECORDED("usage.recorded"),
    /** An operator recorded the reconciled usage of a quarantined attempt. */
    USAGE_RECONCILED("usage.reconciled"),
    /** A signed provider callback for the attempt was stored. */
    CALLBACK_RECEIVED("callback.received"),
    /** This attempt's result won the job. */
    WINNER_ELECTED("winner.elected"),
    /** The apply key was reserved before the target was touched. */
    APPLY_RESERVED("apply.reserved"),
    /** The apply key was reserved already (a resumed apply). */
    APPLY_KEY_EXISTS("apply.key_exists"),
    /** The target already had the commit with this apply key. */
    APPLY_FOUND_ON_TARGET("apply.found_on_target"),
    /** The patch was applied to the target. */
    APPLY_DONE("apply.done"),
    /** The target could not take the patch now; the apply is retried with backoff. */
    APPLY_DEFERRED("apply.deferred"),
    /** The target refused the patch for good. */
    APPLY_REFUSED("apply.refused"),
    /** Automatic fallback started an attempt at the next provider. */
    FALLBACK_AUTOMATIC("fallback.automatic"),
    /** Automatic fallback passed over a provider, or refused entirely (switch, budget); the detail says why. */
    FALLBACK_REFUSED("fallback.refused"),
    /** Every provider of the job's fallback list was tried. */
    FALLBACK_EXHAUSTED("fallback.exhausted"),
    /** A claim's reservation took the owner's money budget past its soft threshold; the detail has the figures. */
    BUDGET_THRESHOLD("budget.threshold");

    private final String wireName;

    JobEventKind(String wireName) {
        this.wireName = wireName;
    }

    /** The stored and shown name, such as {@code attempt.requested}. */
    @JsonValue
    public String wireName() {
        return wireName;
    }
}
