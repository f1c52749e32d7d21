package dev.jobapi.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Two of issue 29's bounds on the services, checked after the drain on either rig: the recovery sweep divides
 * its work (no attempt looked up at the provider three times within one sweep interval, however many workers
 * sweep),
 * and no thread waits on the database past the JDBC socket timeout (two thread dumps taken longer than the
 * timeout apart: a thread waiting on the database in both is one the timeout did not free).
 */
final class EndOfRunChecks {

    private EndOfRunChecks() {}

    /**
     * One line per attempt the provider was asked about three times within {@code window} (the fake's lookup log,
     * in arrival order). Two may be honest: the sweep's lookup and one by a redelivered message of the same
     * attempt, which does not wait for the sweep's stamp. Sweeps that do not divide their work ask once per
     * sweeping worker, three in the soak. A lookup that names no attempt is left out.
     */
    static List<String> lookupsCrowdedWithin(JsonNode lookups, Duration window) {
        Map<String, Deque<Instant>> lastTwo = new HashMap<>();
        Map<String, String> crowded = new TreeMap<>();
        for (JsonNode lookup : lookups) {
            String attempt = lookup.path("attemptId").asText(null);
            if (attempt == null) {
                continue;
            }
            Instant at = Instant.parse(lookup.path("at").asText());
            Deque<Instant> before = lastTwo.computeIfAbsent(attempt, a -> new ArrayDeque<>());
            if (before.size() == 2 && Duration.between(before.peekFirst(), at).compareTo(window) < 0) {
                crowded.putIfAbsent(
                        attempt,
                        "attempt " + attempt + " looked up at " + before.peekFirst() + ", " + before.peekLast()
                                + " and " + at + " (three within the " + window.toSeconds() + " s sweep interval)");
            }
            before.addLast(at);
            if (before.size() > 2) {
                before.removeFirst();
            }
        }
        return List.copyOf(crowded.values());
    }

    /** Thread dumps {@code timeout} plus 5 s apart; per process, the threads waiting on the database in both. */
    static Map<String, Set<String>> blockedThreads(Ctl ctl, Duration timeout) throws InterruptedException {
        Map<String, Set<String>> first = ctl.jdbcThreads();
        Thread.sleep(timeout.plusSeconds(5).toMillis());
        return waitingInBoth(first, ctl.jdbcThreads());
    }

    static Map<String, Set<String>> waitingInBoth(Map<String, Set<String>> first, Map<String, Set<String>> second) {
        Map<String, Set<String>> both = new TreeMap<>();
        first.forEach((process, threads) -> {
            Set<String> still = new TreeSet<>(threads);
            still.retainAll(second.getOrDefault(process, Set.of()));
            if (!still.isEmpty()) {
                both.put(process, still);
            }
        });
        return both;
    }

    /** The report's section; adds a line to {@code violations} for each bound broken. */
    static String render(
            List<String> closeLookups,
            Map<String, Set<String>> blocked,
            Duration window,
            Duration timeout,
            List<String> violations) {
        StringBuilder out = new StringBuilder("\n## The sweep's division and threads on the database\n\n");
        out.append("- Attempts looked up three times within one sweep interval (")
                .append(window.toSeconds())
                .append(" s) across all workers: ")
                .append(closeLookups.size())
                .append('\n');
        closeLookups.stream()
                .limit(20)
                .forEach(line -> out.append("  - ").append(line).append('\n'));
        out.append("- Threads waiting on the database in two thread dumps ")
                .append(timeout.plusSeconds(5).toSeconds())
                .append(" s apart (the JDBC socket timeout is ")
                .append(timeout.toSeconds())
                .append(" s): ")
                .append(blocked.isEmpty() ? "none" : blocked.toString())
                .append('\n');
        violations.addAll(closeLookups);
        blocked.forEach((process, threads) -> violations.add(process + ": threads waiting on the database past the "
                + timeout.toSeconds() + " s socket timeout: " + threads));
        return out.toString();
    }
}
