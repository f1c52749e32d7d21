package dev.jobapi.fakeprovider;

import java.util.List;
import java.util.Objects;

/**
 * A scripted sequence of answers for the requests it matches: each such request takes the next step, and the last
 * step repeats. A request matches when it asks for {@code model} (any model when null) and its prompt contains {@code
 * match} (any prompt when null or empty). Both are what a real client sends anyway: the model is the one its
 * configuration names, the prompt is the user's text, so the product never has to add anything for the fake to tell
 * requests apart.
 */
public record Script(String model, String match, List<Step> steps) {

    public Script {
        if (model != null && model.isBlank()) {
            throw new IllegalArgumentException("model must name a model, or be left out to match any model");
        }
        match = match == null ? "" : match;
        if (steps == null || steps.isEmpty()) {
            throw new IllegalArgumentException("steps must list at least one step");
        }
        // Checked by hand: contains(null) itself throws on immutable lists.
        if (steps.stream().anyMatch(Objects::isNull)) {
            throw new IllegalArgumentException("steps must not contain null");
        }
        steps = List.copyOf(steps);
    }

    /** A script for requests to any model whose prompt contains {@code match} ({@code ""}: every request). */
    public static Script of(String match, Step... steps) {
        return new Script(null, match, List.of(steps));
    }

    /** A script for every request that asks for {@code model}. */
    public static Script forModel(String model, Step... steps) {
        return new Script(Objects.requireNonNull(model, "model"), "", List.of(steps));
    }

    /** A script for requests that ask for {@code model} and whose prompt contains {@code match}. */
    public static Script forModel(String model, String match, Step... steps) {
        return new Script(Objects.requireNonNull(model, "model"), match, List.of(steps));
    }
}
