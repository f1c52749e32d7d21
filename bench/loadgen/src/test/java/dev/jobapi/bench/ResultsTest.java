package dev.jobapi.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ResultsTest {

    private static final String FRESH_C16 =
            "fresh concurrency=16 label=fresh-c16 mode=closed requests=3000 errors=0 seconds=15.00"
                    + " throughput=200.0 p50_ms=80.00 p99_ms=200.00 p999_ms=280.00 max_ms=300.00";

    private static List<Observation> observations(String... lines) {
        return java.util.Arrays.stream(lines).map(Observation::parse).toList();
    }

    private static List<String> rows(String... lines) {
        return new Results(observations(lines), Map.of())
                .rows().stream().map(Results.Row::markdown).toList();
    }

    @Test
    void dividesWithTwoDecimalsAndLeavesADashWhenEitherSideIsMissing() {
        assertEquals("0.15", Results.ratio("181.7", "1242.3"));
        assertEquals("-", Results.ratio("-", "1242.3"));
        assertEquals("-", Results.ratio("181.7", "-"));
        assertEquals("-", Results.ratio("181.7", null));
        assertEquals("-", Results.ratio("181.7", "0"));
    }

    @Test
    void judgesTheIntakeRowsAgainstTheirCeilingAndTheFreshKeys() {
        List<String> rows = rows(
                "ceiling concurrency=16 tps=400.0",
                "least-intake concurrency=16 tps=4000.0",
                FRESH_C16,
                "replay concurrency=16 throughput=150.0 p50_ms=1 p99_ms=2 p999_ms=3");

        assertEquals(
                List.of(
                        "| 1 | ceiling: pgbench intake SQL | c16 | 400.0 | - | - | - | 1.00 | - |",
                        "| 1 | least intake SQL: job ON CONFLICT, attempt, outbox row | c16 | 4000.0 | - | - | - | 10.00 | - |",
                        "| 3 | POST /jobs fresh keys | c16 | 200.0 | 80.00 | 200.00 | 280.00 | 0.50 | >= 0.5 x ceiling: met |",
                        "| 4 | POST /jobs replayed keys | c16 | 150.0 | 1 | 2 | 3 | 0.38 | >= fresh: MISSED |"),
                rows);
    }

    @Test
    void judgesTheFairShareOnlyWhenTheRelayTakesTurns() {
        List<String> rows = rows(
                "fairness order=fair backlog=2000 seconds=1.42 left=1890",
                "fairness order=fair backlog=20000 seconds=2.50 left=19800",
                "fairness order=fifo backlog=2000 seconds=44.10 left=0");

        assertEquals(
                List.of(
                        "| 8 | fair share, 1 worker: owner B's one job, submitted behind owner A's backlog, completed"
                                + " after (s) | 2000 of A's jobs waiting, 1890 still after | - | 1.42 | - | - | - |"
                                + " <= 2 s: met |",
                        "| 8 | fair share, 1 worker: owner B's one job, submitted behind owner A's backlog, completed"
                                + " after (s) | 20000 of A's jobs waiting, 19800 still after | - | 2.50 | - | - | - |"
                                + " <= 2 s: MISSED |",
                        "| 8 | fair share, 1 worker: owner B's one job, submitted behind owner A's backlog, completed"
                                + " after (s); the relay in the outbox's order, for reference | 2000 of A's jobs"
                                + " waiting, 0 still after | - | 44.10 | - | - | - | - |"),
                rows);
    }

    @Test
    void aStepThatMeasuredNothingLeavesItsGoalOpen() {
        List<String> rows = rows("ceiling concurrency=16 tps=-", "fresh concurrency=16");

        assertEquals("| 3 | POST /jobs fresh keys | c16 | - | - | - | - | - | >= 0.5 x ceiling: n/a |", rows.get(1));
    }

    @Test
    void countsEndToEndJobsPerSecondOnlyWhenEveryJobCompleted() {
        List<String> rows = rows(
                "pipeline-ceiling concurrency=16 tps=200.0",
                "e2e workers=1 concurrency=16 jobs=1500 completed=1500 seconds=30.00 max_queue=9 connections=38 active=2"
                        + " database=jobapi_bench",
                "e2e workers=2 concurrency=16 jobs=1500 completed=1499 seconds=20.00 max_queue=0 connections=-"
                        + " active=- database=jobapi_bench");

        assertEquals(
                "| 5 | end to end, 1 worker process(es) | c16, 1500 jobs | 50.0 | - | - | - | 0.25 | >= 0.25 x ceiling: met |",
                rows.get(1));
        assertEquals(
                "| 5 | end to end, 2 worker process(es) | c16, 1500 jobs | - | - | - | - | - | >= 0.25 x ceiling: n/a |",
                rows.get(2));
    }

    @Test
    void notesEachEndToEndStepAndItsGainOverThePreviousOne() {
        Results results = new Results(
                observations(
                        "naive concurrency=16 jobs=1500 completed=1500 seconds=25.00",
                        "e2e workers=1 concurrency=16 jobs=1500 completed=1500 seconds=30.00 max_queue=9"
                                + " connections=38 active=2 database=jobapi_bench commits=6180 relay_commits=150"
                                + " bench_queries=30 window_ms=37500 quiet_commits=75 quiet_relay_commits=15"
                                + " quiet_ms=15000",
                        "e2e workers=2 concurrency=16 jobs=1500 completed=1500 seconds=25.00 max_queue=0"
                                + " connections=- active=- database=jobapi_bench",
                        "api-started-in seconds=5.200"),
                Map.of());

        assertEquals(
                List.of(
                        "- (5) naive: 1500 jobs in 25.00 s",
                        "- (5) 1 worker(s): 1500 jobs in 30.00 s; max queue depth 9; connections to jobapi_bench: 38 (2 active);"
                                + " commits per completed job 4.12 every process's: the jobs' 3.90, the relay's 0.10,"
                                + " the background loops' 0.10, bench/run's polling 0.02 (pg_stat_database)",
                        "- (5) 2 worker(s): 1500 jobs in 25.00 s; max queue depth 0; connections to jobapi_bench: -;"
                                + " commits per completed job - (pg_stat_database)",
                        "- (5) 2 worker(s) vs the previous step: 1.20x",
                        "- (7) api restart: Quarkus reports \"started in 5.200s\" (inside the JVM; the row above counts from exec)"),
                results.notes());
        assertEquals("60.0", results.figures().get("e2e-w2"));
        assertEquals("4.12", results.figures().get("e2e-w1-commits"));
        assertEquals("3.90", results.figures().get("e2e-w1-commits-jobs"));
        assertEquals("0.10", results.figures().get("e2e-w1-commits-relay"));
    }

    @Test
    void judgesGrowthOnceAtTheLargestSizeAgainstTheSmallest() {
        List<String> rows = rows(
                "growth-post size=10000 stored=10000 rate=72 throughput=72.0 p50_ms=7 p99_ms=20.00 p999_ms=50",
                "growth-post size=100000 stored=100936 rate=72 throughput=72.0 p50_ms=7 p99_ms=30.00 p999_ms=50",
                "growth-post size=1000000 stored=1001872 rate=72 throughput=72.0 p50_ms=7 p99_ms=24.00 p999_ms=50");

        assertTrue(rows.get(0).endsWith("| p99 x1.00 | p99 <= 1.25 x first: n/a |"), rows.get(0));
        // Over the bound in between does not count: only the largest size is judged.
        assertTrue(rows.get(1).endsWith("| p99 x1.50 | p99 <= 1.25 x first: n/a |"), rows.get(1));
        assertTrue(rows.get(2).startsWith("| 6 | POST /jobs, 1001872 jobs stored | open 72/s | 72.0 |"), rows.get(2));
        assertTrue(rows.get(2).endsWith("| p99 x1.20 | p99 <= 1.25 x first: met |"), rows.get(2));
    }

    @Test
    void aSingleGrowthSizeHasNothingToBeJudgedAgainst() {
        List<String> rows =
                rows("growth-get size=1000 stored=1000 rate=10 throughput=10.0 p50_ms=5 p99_ms=9 p999_ms=9");

        assertTrue(rows.get(0).endsWith("| p99 x1.00 | p99 <= 1.25 x first: n/a |"), rows.get(0));
    }

    @Test
    void judgesTheFootprintInMegabytesAndMilliseconds() {
        List<String> rows = rows(
                "api-memory peak_mb=406 end_mb=390",
                "worker-memory worker=1 mb=401",
                "api-ready start=first ms=2999",
                "api-first-post seconds=0.378",
                "api-ready start=restart ms=5541 cpu_ms=7018 stored=1002808",
                "worker-ready worker=1 ms=4649 cpu_ms=6120");

        assertEquals(
                List.of(
                        "| 7 | api resident memory: peak under load / at the end | - | 406 / 390 MB | - | - | - | - | < 300 MB: MISSED |",
                        "| 7 | worker-1 resident memory after the run | - | 401 MB | - | - | - | - | - |",
                        "| 7 | api start to ready (first start: migrates the schema) | - | 2999 ms | - | - | - | - | < 3 s: met |",
                        "| 7 | api first POST /jobs after ready | - | 378 ms | - | - | - | - | - |",
                        "| 7 | api start to ready (restart, 1002808 jobs stored) | - | 5541 ms, 7018 ms of CPU | - | - | - | - | < 3 s: MISSED |",
                        "| 7 | worker-1 start to ready | - | 4649 ms, 6120 ms of CPU | - | - | - | - | - |"),
                rows);
    }

    @Test
    void growsTheGrowthRateWithTheFreshThroughputAboveAFloor() {
        assertEquals(80, new Results(observations(FRESH_C16), Map.of()).growthRate());
        assertEquals(10, new Results(observations("fresh concurrency=16 throughput=20.0"), Map.of()).growthRate());
        assertEquals(10, new Results(observations(), Map.of()).growthRate());
    }

    @Test
    void writesThePageWithEverySectionAndTheAnalysisOnlyAfterAFullRun() {
        CpuSplit w1 = new CpuSplit("e2e-w1", 1500, 30, 99, Map.of("workers", 17.0), Map.of("workers", 85.0));
        Results results = new Results(
                observations(
                        "least-intake concurrency=16 tps=4000.0",
                        FRESH_C16,
                        "naive concurrency=16 jobs=20 completed=20 seconds=1.00"),
                Map.of("e2e-w1", w1));
        Results.Run full = new Results.Run(
                "bench/run ", false, "2026-12-02 00:51", "01:02", "- a machine\n", Optional.of("## Analysis\n"));

        String page = results.markdown(full);

        assertTrue(
                page.startsWith("# Benchmark results\n\nCommand: `bench/run ` (full run, 2026-12-02 00:51 to 01:02"
                        + " UTC). How to read it: docs/benchmarks.md.\n\n- a machine\n\n| # | measurement |"),
                page);
        assertTrue(page.contains("\n\n## Goals of issue #33, from this run\n\n| figure |"), page);
        assertTrue(page.contains("| POST /jobs fresh c16, p99 | - | < 50 ms | 200.00 ms | MISSED |"), page);
        assertTrue(page.contains("\n\n## CPU per job\n\n"), page);
        assertTrue(page.contains("| e2e-w1 | 1500 | 30.0 | 99% | 17.00 (85%) |"), page);
        assertTrue(page.contains("\n\n## Observed during the run\n\n- (5) naive: 20 jobs in 1.00 s\n"), page);
        assertTrue(page.endsWith("\n\n## Analysis\n"), page);

        String smoke = results.markdown(new Results.Run(
                "bench/run --smoke", true, "2026-12-02 00:51", "00:55", "- a machine", Optional.of("## Analysis\n")));
        assertTrue(
                smoke.contains("(smoke: tiny counts, the numbers mean nothing, 2026-12-02 00:51 to 00:55 UTC)"), smoke);
        assertFalse(smoke.contains("## Analysis"), smoke);
    }
}
