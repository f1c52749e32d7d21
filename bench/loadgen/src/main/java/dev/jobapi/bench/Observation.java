package dev.jobapi.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One raw measurement bench/run recorded, as it recorded it: a line "step key=value key=value ...",
 * where the step names what was measured ({@code ceiling}, {@code fresh}, {@code e2e}, ...) and the
 * values are what the step saw (a load generator's result line contributes its own pairs). Nothing
 * in it is computed: {@link Results} does the arithmetic.
 *
 * @param step what was measured
 * @param fields the recorded values, in the order they were written
 */
record Observation(String step, Map<String, String> fields) {

    static Observation parse(String line) {
        String[] words = line.trim().split("\\s+");
        Map<String, String> fields = new LinkedHashMap<>();
        for (int i = 1; i < words.length; i++) {
            int eq = words[i].indexOf('=');
            if (eq > 0) {
                fields.put(words[i].substring(0, eq), words[i].substring(eq + 1));
            }
        }
        return new Observation(words[0], fields);
    }

    /** Every observation of FILE, in the order bench/run recorded them; blank lines are skipped. */
    static List<Observation> read(Path file) throws IOException {
        List<Observation> observations = new ArrayList<>();
        for (String line : Files.readAllLines(file)) {
            if (!line.isBlank()) {
                observations.add(parse(line));
            }
        }
        return observations;
    }

    /** The value as recorded, "-" when the step recorded none (it ran but measured nothing). */
    String text(String key) {
        String value = fields.get(key);
        return value == null || value.isEmpty() ? "-" : value;
    }

    /** The value as a number; empty when missing, "-" or not a number. */
    Optional<Double> number(String key) {
        return Results.number(fields.get(key));
    }
}
