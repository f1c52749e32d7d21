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
        AcceptanceState state,
        String requestedBy,
        Instant requestedAt,
        Instant startedAt,
        Instant finishedAt,
        int tasksTotal,
        int tasksDone,
        int tasksPassed,
        @JsonRawValue String results) {

    public boolean finished() {
        return state.isFinished();
    }
}
