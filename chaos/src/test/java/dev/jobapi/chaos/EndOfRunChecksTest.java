package dev.jobapi.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class EndOfRunChecksTest {

    private static JsonNode lookups(String... atAndAttempt) throws Exception {
        StringBuilder json = new StringBuilder("[");
        for (int i = 0; i < atAndAttempt.length; i += 2) {
            json.append(i == 0 ? "" : ",")
                    .append("{\"at\":\"")
                    .append(atAndAttempt[i])
                    .append("\",\"attemptId\":")
                    .append(atAndAttempt[i + 1] == null ? "null" : "\"" + atAndAttempt[i + 1] + "\"")
                    .append(",\"found\":false}");
        }
        return Api.JSON.readTree(json.append(']').toString());
    }

    @Test
    void threeLookupsOfOneAttemptWithinASweepIntervalAreReportedOnce() throws Exception {
        JsonNode log = lookups(
                "2026-12-03T10:00:00Z", "a",
                "2026-12-03T10:00:00.300Z", "a",
                "2026-12-03T10:00:00.350Z", null,
                "2026-12-03T10:00:01Z", "a",
                "2026-12-03T10:00:01.500Z", "a",
                "2026-12-03T10:00:00Z", "b",
                "2026-12-03T10:00:00.100Z", "b",
                "2026-12-03T10:00:00.200Z", null,
                "2026-12-03T10:00:00.300Z", null);

        List<String> crowded = EndOfRunChecks.lookupsCrowdedWithin(log, Duration.ofSeconds(2));

        assertThat(crowded).hasSize(1);
        assertThat(crowded.get(0)).contains("attempt a").contains("10:00:01Z");
    }

    @Test
    void aSweepsLookupAndARedeliverysAreAllowedTogether() throws Exception {
        JsonNode log = lookups(
                "2026-12-03T10:00:04Z", "a",
                "2026-12-03T10:00:04.500Z", "a",
                "2026-12-03T10:00:08Z", "a",
                "2026-12-03T10:00:16Z", "a");

        assertThat(EndOfRunChecks.lookupsCrowdedWithin(log, Duration.ofSeconds(2)))
                .isEmpty();
    }

    @Test
    void onlyAThreadWaitingInBothDumpsIsBlocked() {
        Map<String, Set<String>> first =
                Map.of("worker-1", Set.of("lease-keeper-0", "executor-thread-2"), "api-1", Set.of("executor-thread-1"));
        Map<String, Set<String>> second = Map.of("worker-1", Set.of("lease-keeper-0"), "api-1", Set.of());

        Map<String, Set<String>> blocked = EndOfRunChecks.waitingInBoth(first, second);

        assertThat(blocked).isEqualTo(Map.of("worker-1", Set.of("lease-keeper-0")));
        List<String> violations = new ArrayList<>();
        String section =
                EndOfRunChecks.render(List.of(), blocked, Duration.ofSeconds(2), Duration.ofSeconds(30), violations);
        assertThat(section).contains("35 s apart").contains("lease-keeper-0");
        assertThat(violations)
                .containsExactly(
                        "worker-1: threads waiting on the database past the 30 s socket timeout: [lease-keeper-0]");
    }
}
