package dev.jobapi.chaos;

/**
 * The state sets the checker's and the drain's SQL pass as array parameters ({@code state =
 * ANY(?)}). The soak's jar carries no service code, so the sets are written here once, and {@code
 * StatesTest} holds each to the set the state machines in {@code common} derive: a state added to a
 * machine fails that test until it is placed here.
 */
final class States {

    /** Jobs nothing moves any more (terminal job states). */
    static final String[] TERMINAL_JOBS = {"completed", "cancelled"};

    /** Jobs that should have an attempt: terminal, or in review. */
    static final String[] TERMINAL_OR_REVIEWED_JOBS = {"completed", "cancelled", "needs_review"};

    /** Jobs still on their way: accepted or running. */
    static final String[] UNSETTLED_JOBS = {"accepted", "running"};

    /** Attempts whose provider may hold an answer we lost: unknown, and superseded. */
    static final String[] LOOKUP_ATTEMPTS = {"unknown", "superseded"};

    /** Attempts that may still bring a result (open) or brought the job's (succeeded). */
    static final String[] OPEN_OR_SUCCEEDED_ATTEMPTS = {"starting", "unknown", "quarantined", "succeeded"};

    private States() {}
}
