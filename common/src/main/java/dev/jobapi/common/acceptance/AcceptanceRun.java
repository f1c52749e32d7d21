package dev.jobapi.common.acceptance;

import com.fasterxml.jackson.annotation.JsonRawValue;
import java.time.Instant;
import java.util.UUID;

/**
 * One run of the acceptance fixtures against one provider, as stored in provider_acceptance and
 * shown to operators. {@code results} is the JSON array of per-task outcomes, filled in as the run
 * goes, and written out as JSON, not as a string.
 */
public record AcceptanceRun(
        UUID id,
        String provider,
        String state,
        String requestedBy,
        Instant requestedAt,
        Instant startedAt,
        Instant finishedAt,
        int tasksTotal,
        int tasksDone,
        int tasksPassed,
        @JsonRawValue String results) {

    public static final String REQUESTED = "requested";
    public static final String RUNNING = "running";
    public static final String PASSED = "passed";
    public static final String FAILED = "failed";

    public boolean finished() {
        return PASSED.equals(state) || FAILED.equals(state);
    }
}
