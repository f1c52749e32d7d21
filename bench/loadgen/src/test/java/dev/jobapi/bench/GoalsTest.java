package dev.jobapi.bench;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GoalsTest {

    @Test
    void judgesEachGoalFromTheFiguresOfTheRun() {
        Map<String, String> figures = new LinkedHashMap<>(Map.of(
                "concurrency", "16",
                "fresh", "700",
                "fresh-p99", "42.5",
                "pgboss-send", "1200",
                "e2e-w1", "350",
                "e2e-w2", "420",
                "e2e-w1-commits", "3.27",
                "e2e-w1-commits-jobs", "3.00",
                "e2e-w1-commits-relay", "0.14",
                "e2e-w1-commits-loops", "0.13"));
        CpuSplit w1 = new CpuSplit(
                "e2e-w1",
                100,
                2,
                90,
                Map.of("api", 0.9, "workers", 4.0, "postgres", 1.1),
                Map.of("api", 5.0, "workers", 20.0, "postgres", 6.0));

        String table = new Goals(figures, Map.of("e2e-w1", w1)).markdown();

        assertTrue(
                table.contains("| POST /jobs fresh c16 vs pg-boss's deduplicated `send` | 0.15 | ≥ 0.5 | 0.58 | met |"),
                table);
        assertTrue(table.contains("| POST /jobs fresh c16, p99 | - | < 50 ms | 42.50 ms | met |"), table);
        assertTrue(
                table.contains(
                        "| end to end, 1 worker process, jobs/s | 166 (wrk, from outside) | ≥ 400 | 350.00 | MISSED |"),
                table);
        assertTrue(table.contains("| 1.20× |"), table);
        assertTrue(
                table.contains(
                        "| PostgreSQL CPU per completed job (1 worker) | 3.1–3.6 ms | ≤ 1.2 ms | 1.10 ms | met |"),
                table);
        assertTrue(
                table.contains("| worker CPU per completed job (1 worker) | 7.6 ms | ≤ 2.5 ms | 4.00 ms | MISSED |"),
                table);
        assertTrue(
                table.contains("| api CPU per completed job (1 worker) | 1.7 ms | ≤ 1.0 ms | 0.90 ms | met |"), table);
        assertTrue(
                table.contains("| about 4 | ≤ 3 plus the relay's share | 3.00 + the relay's 0.14 (every process's 3.27,"
                        + " the loops' and polling 0.13) | met |"),
                table);
    }

    @Test
    void leavesAGoalOpenWhenItsStepMeasuredNothing() {
        Map<String, String> figures = Map.of("fresh", "300", "pgboss-send", "-");

        String table = new Goals(figures, Map.of()).markdown();

        assertTrue(
                table.contains("| POST /jobs fresh c16 vs pg-boss's deduplicated `send` | 0.15 | ≥ 0.5 | - | - |"),
                table);
        assertTrue(table.contains("| worker CPU per completed job (1 worker) | 7.6 ms | ≤ 2.5 ms | - | - |"), table);
    }
}
