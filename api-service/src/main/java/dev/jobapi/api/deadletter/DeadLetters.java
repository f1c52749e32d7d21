package dev.jobapi.api.deadletter;

import dev.jobapi.common.attempt.AttemptState;
import dev.jobapi.common.job.JobState;
import java.util.Locale;

/** What the mover and an operator's replay both ask of a dead letter's attempt. */
public final class DeadLetters {

    private DeadLetters() {}

    /**
     * An attempt that failed or was superseded, or whose job is closed, has nothing left for a worker
     * to do. A succeeded attempt of an open job still has its apply to finish.
     *
     * @param attemptState the attempt's state as stored (lower case)
     * @param jobState its job's state as stored (lower case)
     */
    public static boolean nothingLeftToDo(String attemptState, String jobState) {
        AttemptState attempt = AttemptState.valueOf(attemptState.toUpperCase(Locale.ROOT));
        JobState job = JobState.valueOf(jobState.toUpperCase(Locale.ROOT));
        return attempt == AttemptState.FAILED || attempt == AttemptState.SUPERSEDED || job.isTerminal();
    }
}
