package dev.jobapi.fakeprovider;

import java.util.List;
import java.util.Objects;

/**
 * A scripted sequence of answers for requests whose prompt contains {@code match}: each such request takes the next
 * step, and the last step repeats.
 */
public record Script(String match, List<Step> steps) {

    public Script {
        if (match == null) {
            throw new IllegalArgumentException("match is required (\"\" matches every request)");
        }
        if (steps == null || steps.isEmpty()) {
            throw new IllegalArgumentException("steps must list at least one step");
        }
        // Checked by hand: contains(null) itself throws on immutable lists.
        if (steps.stream().anyMatch(Objects::isNull)) {
            throw new IllegalArgumentException("steps must not contain null");
        }
        steps = List.copyOf(steps);
    }

    /** A script for prompts containing {@code match} with the given steps in order. */
    public static Script of(String match, Step... steps) {
        return new Script(match, List.of(steps));
    }
}
