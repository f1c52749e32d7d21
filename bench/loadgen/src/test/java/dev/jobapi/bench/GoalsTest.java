package dev.jobapi.bench;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GoalsTest {

    @Test
    void computesEachRatioFromTheFiguresOfTheRun() {
        Map<String, String> figures = new LinkedHashMap<>(Map.of(
                "concurrency", "16",
                "fresh", "300",
                "least-intake", "6000",
                "e2e-w1", "50",
                "e2e-w2", "60",
                "least-pipeline", "400",
                "pgboss-send", "1200"));
        CpuSplit w1 = new CpuSplit("e2e-w1", 100, 2, 90, Map.of("workers", 4.0), Map.of("workers", 20.0));

        String table = new Goals(figures, Map.of("e2e-w1", w1)).markdown();

        assertTrue(
                table.contains("| POST /jobs fresh c16 / least intake SQL | 0.03–0.04 | ≥ 0.25 | 0.05 | MISSED |"),
                table);
        assertTrue(table.contains("| 0.03 | ≥ 0.10 | 0.13 | met |"), table);
        assertTrue(table.contains("| 1.20× |"), table);
        assertTrue(table.contains("| 4.00 ms | met |"), table);
        assertTrue(table.contains("| ≈ 0.15 | ≥ 1.0 | 0.25 | MISSED |"), table);
    }

    @Test
    void leavesAGoalOpenWhenItsStepMeasuredNothing() {
        Map<String, String> figures = Map.of("fresh", "300", "least-intake", "-");

        String table = new Goals(figures, Map.of()).markdown();

        assertTrue(table.contains("| POST /jobs fresh c16 / least intake SQL | 0.03–0.04 | ≥ 0.25 | - | - |"), table);
        assertTrue(table.contains("| worker CPU per job (1 worker) | ≈ 25 ms | ≤ 5 ms | - | - |"), table);
    }
}
