package dev.jobapi.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CpuSplitTest {

    @TempDir
    Path dir;

    @Test
    void chargesEachProcessItsTicksPerCompletedJob() throws Exception {
        Path before = Files.write(
                dir.resolve("before"),
                List.of(
                        "machine machine 1000 4000",
                        "101 java 500",
                        "102 java 100",
                        "103 java 100",
                        "200 postgres 50",
                        "300 beam.smp 70",
                        "400 java 10"));
        // A postgres backend (201) opened during the step counts from zero; an idle one (200) not at all.
        Path after = Files.write(
                dir.resolve("after"),
                List.of(
                        "machine machine 1800 5000",
                        "101 java 700",
                        "102 java 400",
                        "103 java 200",
                        "200 postgres 50",
                        "201 postgres 300",
                        "300 beam.smp 90",
                        "400 java 60"));

        CpuSplit split = CpuSplit.of(
                "e2e-w2", before, after, 100, 10, Map.of("101", "api", "102", "worker-1", "103", "worker-2"), 100);

        // 200 ticks at 100 a second = 2 s of CPU for 100 jobs = 20 ms a job, 20% of a core over 10 s.
        assertEquals(20.0, split.msPerJob().get("api"), 1e-9);
        assertEquals(20.0, split.percentOfCore().get("api"), 1e-9);
        assertEquals(30.0, split.msPerJob().get("worker-1"), 1e-9);
        assertEquals(10.0, split.msPerJob().get("worker-2"), 1e-9);
        assertEquals(40.0, split.msPerJob().get(CpuSplit.WORKERS), 1e-9);
        assertEquals(30.0, split.msPerJob().get("postgres"), 1e-9);
        assertEquals(2.0, split.msPerJob().get("rabbitmq"), 1e-9);
        assertEquals(5.0, split.msPerJob().get("other"), 1e-9);
        assertEquals(80.0, split.busyPercent(), 1e-9);
        assertEquals(
                List.of("api", "worker-1", "worker-2", CpuSplit.WORKERS, "postgres", "rabbitmq", "other"),
                List.copyOf(split.msPerJob().keySet()));
    }

    @Test
    void readsBackTheLineItWrites() throws Exception {
        Path snapshot = Files.write(dir.resolve("s"), List.of("machine machine 10 20", "101 java 5"));
        Path later = Files.write(dir.resolve("t"), List.of("machine machine 20 40", "101 java 105"));

        CpuSplit split = CpuSplit.of("e2e-w1", snapshot, later, 50, 2, Map.of("101", "api"), 100);

        assertEquals(split, CpuSplit.parse(split.line()));
    }
}
