package dev.jobapi.client.model;

import java.time.Instant;
import java.util.List;
import java.util.UUID;

/** One run of the acceptance fixtures against a provider, with its per-task results so far. */
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
        List<TaskResult> results) {

    /** A run that passed or failed changes no more. */
    public boolean finished() {
        return "passed".equals(state) || "failed".equals(state);
    }

    public boolean passed() {
        return "passed".equals(state);
    }

    /** One fixture's outcome; {@code reason} says why it failed. */
    public record TaskResult(String task, boolean passed, String reason) {}
}
