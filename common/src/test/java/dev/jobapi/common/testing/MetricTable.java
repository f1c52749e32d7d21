package dev.jobapi.common.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The README's metric table and a service's {@code /q/metrics}, each as metric name to help text, so a
 * test can compare the two: the table is the operators' reference and must not drift.
 */
public final class MetricTable {

    private static final Pattern ROW =
            Pattern.compile("^\\| `(jobapi_[a-z_]+)` \\| ([a-z]+) \\| [a-z]+ \\|[^|]*\\| (.+?) \\|$");
    private static final Pattern HELP = Pattern.compile("^# HELP (jobapi_[a-z_]+) (.*)$");
    private static final Pattern COUNTER = Pattern.compile("^# TYPE (jobapi_[a-z_]+) counter$");

    private MetricTable() {}

    /** The README's rows for one service ({@code api} or {@code worker}). */
    public static Map<String, String> documented(String service) {
        Map<String, String> metrics = new TreeMap<>();
        for (String line : readme().split("\n")) {
            Matcher row = ROW.matcher(line);
            if (row.matches() && row.group(2).equals(service)) {
                metrics.put(row.group(1), row.group(3));
            }
        }
        return metrics;
    }

    /**
     * Every {@code jobapi_*} family in a Prometheus scrape with its {@code # HELP} text, named as its
     * samples are (and as people query them): a counter family {@code x} by its sample {@code x_total}.
     */
    public static Map<String, String> served(String scrape) {
        Map<String, String> help = new TreeMap<>();
        java.util.Set<String> counters = new java.util.HashSet<>();
        for (String line : scrape.split("\n")) {
            Matcher helpLine = HELP.matcher(line);
            if (helpLine.matches()) {
                help.put(helpLine.group(1), helpLine.group(2));
            }
            Matcher counterLine = COUNTER.matcher(line);
            if (counterLine.matches()) {
                counters.add(counterLine.group(1));
            }
        }
        Map<String, String> metrics = new TreeMap<>();
        help.forEach((family, text) -> metrics.put(
                counters.contains(family) && !family.endsWith("_total") ? family + "_total" : family, text));
        return metrics;
    }

    private static String readme() {
        // Tests run in their module's directory; the README is at the root of the repository.
        try {
            return Files.readString(Path.of("..", "README.md"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
