package dev.jobapi.bench;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * bench/RESULTS.md from the raw observations of one run (see {@link Observation}): the table of
 * docs/benchmarks.md with every ratio, jobs/s and goal verdict computed here, the goals of issue #15
 * ({@link Goals}), the CPU per job ({@link CpuSplit}) and the notes of what the run observed.
 *
 * <p>The steps bench/run records, in the order it runs them, and the rows each becomes:
 *
 * <pre>
 *   ceiling          concurrency tps                          (1) pgbench intake SQL
 *   least-intake     concurrency tps                          (1) least intake SQL, vs the ceiling
 *   baseline         concurrency + a load generator result    (2) plain insert, vs the ceiling
 *   peer-send        version concurrency + result             (2) pg-boss send, vs the ceiling
 *   fresh, replay    concurrency + result                     (3), (4) POST /jobs, vs the ceiling, goals
 *   pipeline-ceiling concurrency tps                          (5) pgbench per-job pipeline SQL
 *   least-pipeline   concurrency tps                          (5) vs the pipeline ceiling
 *   peer-work        workers batch + result                   (5) pg-boss work + complete
 *   naive            concurrency jobs completed seconds       (5) naive end to end, a note
 *   e2e              workers concurrency jobs completed seconds max_queue connections active database
 *                    commits relay_commits bench_queries window_ms quiet_commits quiet_relay_commits
 *                    quiet_ms (CommitShares)
 *                                                             (5) end to end, a note per step
 *   growth-post, growth-get  size stored rate + result        (6) p99 against the first size, goal at the last
 *   api-memory       peak_mb end_mb                           (7) with its goal
 *   worker-memory    worker mb                                (7)
 *   api-ready        start (first or restart) ms [cpu_ms] [stored]  (7) with its goal
 *   api-first-post   seconds                                  (7)
 *   worker-ready     worker ms [cpu_ms]                       (7)
 *   api-started-in   seconds (what Quarkus logged)            a note
 *   fairness         order backlog seconds left               (8) another owner's job behind a backlog,
 *                                                             with its goal when the relay takes turns
 * </pre>
 */
final class Results {

    /** The table's columns, as docs/benchmarks.md explains them. */
    record Row(
            String id,
            String what,
            String load,
            String throughput,
            String p50,
            String p99,
            String p999,
            String vsCeiling,
            String goal) {

        String markdown() {
            return "| " + String.join(" | ", id, what, load, throughput, p50, p99, p999, vsCeiling, goal) + " |";
        }
    }

    /**
     * What the page says about the run itself.
     *
     * @param command the command line that ran
     * @param smoke a smoke run: tiny counts, no analysis appended
     * @param started date and time the run started (UTC)
     * @param finished time it finished (UTC)
     * @param machine the Markdown lines describing the machine
     * @param analysis bench/ANALYSIS.md when present, appended after a full run
     */
    record Run(
            String command,
            boolean smoke,
            String started,
            String finished,
            String machine,
            Optional<String> analysis) {}

    /** Of the fresh-key throughput at the first concurrency: the growth steps' fixed rate. */
    static final double GROWTH_RATE_SHARE = 0.4;

    /** The growth steps' rate never goes below this, whatever the intake step measured. */
    static final int GROWTH_RATE_FLOOR = 10;

    private final List<Observation> observations;
    private final Map<String, CpuSplit> cpu;

    Results(List<Observation> observations, Map<String, CpuSplit> cpu) {
        this.observations = observations;
        this.cpu = cpu;
    }

    /** The rows of the table, in the order the run measured them. */
    List<Row> rows() {
        List<Row> rows = new ArrayList<>();
        Map<String, String> ceiling = new HashMap<>();
        Map<String, String> fresh = new HashMap<>();
        String pipelineCeiling = "-";
        long growthSizes = observations.stream()
                .filter(o -> o.step().equals("growth-post"))
                .count();
        Map<String, Observation> firstGrowth = new HashMap<>();
        Map<String, Integer> growthSeen = new HashMap<>();
        for (Observation o : observations) {
            String c = o.text("concurrency");
            switch (o.step()) {
                case "ceiling" -> {
                    ceiling.put(c, o.text("tps"));
                    rows.add(new Row(
                            "1", "ceiling: pgbench intake SQL", "c" + c, o.text("tps"), "-", "-", "-", "1.00", "-"));
                }
                case "least-intake" -> rows.add(new Row(
                        "1",
                        "least intake SQL: job ON CONFLICT, attempt, outbox row",
                        "c" + c,
                        o.text("tps"),
                        "-",
                        "-",
                        "-",
                        ratio(o.text("tps"), ceiling.get(c)),
                        "-"));
                case "baseline" -> rows.add(latencyRow(
                        "2",
                        "baseline: plain insert, no guarantees",
                        o,
                        ratio(o.text("throughput"), ceiling.get(c)),
                        "-"));
                case "peer-send" -> rows.add(latencyRow(
                        "2",
                        "peer: pg-boss " + o.text("version") + " send, deduplicated",
                        o,
                        ratio(o.text("throughput"), ceiling.get(c)),
                        "-"));
                case "fresh" -> {
                    String vs = ratio(o.text("throughput"), ceiling.get(c));
                    fresh.put(c, o.text("throughput"));
                    rows.add(latencyRow(
                            "3",
                            "POST /jobs fresh keys",
                            o,
                            vs,
                            goal(">= 0.5 x ceiling", number(vs).map(r -> r >= 0.5))));
                }
                case "replay" -> {
                    Optional<Double> freshThroughput = number(fresh.get(c));
                    Optional<Boolean> met = o.number("throughput").flatMap(t -> freshThroughput.map(f -> t >= f));
                    rows.add(latencyRow(
                            "4",
                            "POST /jobs replayed keys",
                            o,
                            ratio(o.text("throughput"), ceiling.get(c)),
                            goal(">= fresh", met)));
                }
                case "pipeline-ceiling" -> {
                    pipelineCeiling = o.text("tps");
                    rows.add(new Row(
                            "5",
                            "ceiling: pgbench per-job pipeline SQL",
                            "c" + c,
                            pipelineCeiling,
                            "-",
                            "-",
                            "-",
                            "1.00",
                            "-"));
                }
                case "least-pipeline" -> rows.add(new Row(
                        "5",
                        "least pipeline SQL: intake, relay, claim, one result transaction",
                        "c" + c,
                        o.text("tps"),
                        "-",
                        "-",
                        "-",
                        ratio(o.text("tps"), pipelineCeiling),
                        "-"));
                case "peer-work" -> rows.add(new Row(
                        "5",
                        "peer: pg-boss work + complete, " + o.text("workers") + " workers, batches of "
                                + o.text("batch"),
                        o.text("requests") + " jobs",
                        o.text("throughput"),
                        "-",
                        "-",
                        "-",
                        "-",
                        "-"));
                case "naive" -> {
                    String jobsPerSecond = jobsPerSecond(o);
                    rows.add(new Row(
                            "5",
                            "naive end to end: consume, call the fake, insert the result, ack",
                            "c" + c + ", " + o.text("jobs") + " jobs",
                            jobsPerSecond,
                            "-",
                            "-",
                            "-",
                            ratio(jobsPerSecond, pipelineCeiling),
                            "-"));
                }
                case "e2e" -> {
                    String jobsPerSecond = jobsPerSecond(o);
                    String vs = ratio(jobsPerSecond, pipelineCeiling);
                    rows.add(new Row(
                            "5",
                            "end to end, " + o.text("workers") + " worker process(es)",
                            "c" + c + ", " + o.text("jobs") + " jobs",
                            jobsPerSecond,
                            "-",
                            "-",
                            "-",
                            vs,
                            goal(">= 0.25 x ceiling", number(vs).map(r -> r >= 0.25))));
                }
                case "growth-post", "growth-get" -> {
                    Observation first = firstGrowth.computeIfAbsent(o.step(), s -> o);
                    int seen = growthSeen.merge(o.step(), 1, Integer::sum);
                    // Judged once, at the largest size, and only when there is a smaller one to compare with.
                    Optional<Boolean> met = seen == growthSizes && growthSizes > 1
                            ? first.number("p99_ms")
                                    .flatMap(p -> o.number("p99_ms").map(last -> p * 1.25 >= last))
                            : Optional.empty();
                    String what = o.step().equals("growth-post") ? "POST /jobs" : "GET /jobs/{id}";
                    rows.add(new Row(
                            "6",
                            what + ", " + o.text("stored") + " jobs stored",
                            "open " + o.text("rate") + "/s",
                            o.text("throughput"),
                            o.text("p50_ms"),
                            o.text("p99_ms"),
                            o.text("p999_ms"),
                            "p99 x" + ratio(o.text("p99_ms"), first.text("p99_ms")),
                            goal("p99 <= 1.25 x first", met)));
                }
                case "api-memory" -> rows.add(new Row(
                        "7",
                        "api resident memory: peak under load / at the end",
                        "-",
                        o.text("peak_mb") + " / " + o.text("end_mb") + " MB",
                        "-",
                        "-",
                        "-",
                        "-",
                        goal("< 300 MB", o.number("peak_mb").map(mb -> mb < 300))));
                case "worker-memory" -> rows.add(new Row(
                        "7",
                        "worker-" + o.text("worker") + " resident memory after the run",
                        "-",
                        o.text("mb") + " MB",
                        "-",
                        "-",
                        "-",
                        "-",
                        "-"));
                case "api-ready" -> rows.add(new Row(
                        "7",
                        o.text("start").equals("restart")
                                ? "api start to ready (restart, " + o.text("stored") + " jobs stored)"
                                : "api start to ready (first start: migrates the schema)",
                        "-",
                        startTime(o),
                        "-",
                        "-",
                        "-",
                        "-",
                        goal("< 3 s", o.number("ms").map(ms -> ms < 3000))));
                case "api-first-post" -> rows.add(new Row(
                        "7",
                        "api first POST /jobs after ready",
                        "-",
                        o.number("seconds")
                                        .map(s -> String.valueOf((long) (s * 1000)))
                                        .orElse("-")
                                + " ms",
                        "-",
                        "-",
                        "-",
                        "-",
                        "-"));
                case "worker-ready" -> rows.add(new Row(
                        "7",
                        "worker-" + o.text("worker") + " start to ready",
                        "-",
                        startTime(o),
                        "-",
                        "-",
                        "-",
                        "-",
                        "-"));
                case "fairness" -> {
                    boolean fair = o.text("order").equals("fair");
                    rows.add(new Row(
                            "8",
                            "fair share, 1 worker: owner B's one job, submitted behind owner A's backlog,"
                                    + " completed after (s)"
                                    + (fair ? "" : "; the relay in the outbox's order, for reference"),
                            o.text("backlog") + " of A's jobs waiting, " + o.text("left") + " still after",
                            "-",
                            o.text("seconds"),
                            "-",
                            "-",
                            "-",
                            fair ? goal("<= 2 s", number(o.text("seconds")).map(s -> s <= 2)) : "-"));
                }
                default -> {
                    // Steps that only make notes (api-started-in).
                }
            }
        }
        return rows;
    }

    /** The figures {@link Goals} computes the goals of issue #33 from, by name. */
    Map<String, String> figures() {
        Map<String, String> figures = new LinkedHashMap<>();
        for (Observation o : observations) {
            switch (o.step()) {
                case "least-intake" -> figures.put("concurrency", o.text("concurrency"));
                case "peer-send" -> figures.put("pgboss-send", o.text("throughput"));
                    // The first concurrency, the one the least-SQL and peer rows ran at.
                case "fresh" -> {
                    figures.putIfAbsent("fresh", o.text("throughput"));
                    figures.putIfAbsent("fresh-p99", o.text("p99_ms"));
                }
                case "e2e" -> {
                    figures.put("e2e-w" + o.text("workers"), jobsPerSecond(o));
                    String commits = "e2e-w" + o.text("workers") + "-commits";
                    CommitShares.of(o).ifPresent(shares -> {
                        figures.put(commits, twoDecimals(shares.total()));
                        figures.put(commits + "-jobs", twoDecimals(shares.jobs()));
                        figures.put(commits + "-relay", twoDecimals(shares.relay()));
                        figures.put(commits + "-loops", twoDecimals(shares.loops() + shares.bench()));
                    });
                }
                case "api-memory" -> figures.put("api-rss-peak-mb", o.text("peak_mb"));
                case "api-ready" -> {
                    if (o.text("start").equals("restart")) {
                        figures.put("api-ready-ms", o.text("ms"));
                    }
                }
                default -> {
                    // Not a goal's figure.
                }
            }
        }
        return figures;
    }

    /** What the run observed besides the table, one Markdown list item each. */
    List<String> notes() {
        List<String> notes = new ArrayList<>();
        String previous = null;
        for (Observation o : observations) {
            switch (o.step()) {
                case "naive" -> notes.add("- (5) naive: " + o.text("jobs") + " jobs in " + o.text("seconds") + " s");
                case "e2e" -> {
                    String workers = o.text("workers");
                    String connections = o.text("connections").equals("-")
                            ? "-"
                            : o.text("connections") + " (" + o.text("active") + " active)";
                    notes.add("- (5) " + workers + " worker(s): " + o.text("jobs") + " jobs in " + o.text("seconds")
                            + " s; max queue depth " + o.text("max_queue") + "; connections to "
                            + o.text("database") + ": " + connections + "; commits per completed job "
                            + CommitShares.of(o).map(CommitShares::describe).orElse("-")
                            + " (pg_stat_database)");
                    String jobsPerSecond = jobsPerSecond(o);
                    if (previous != null && !jobsPerSecond.equals("-")) {
                        notes.add("- (5) " + workers + " worker(s) vs the previous step: "
                                + ratio(jobsPerSecond, previous) + "x");
                    }
                    previous = jobsPerSecond;
                }
                case "api-started-in" -> notes.add("- (7) api restart: Quarkus reports \"started in "
                        + o.text("seconds") + "s\" (inside the JVM; the row above counts from exec)");
                default -> {
                    // Only rows.
                }
            }
        }
        return notes;
    }

    /** The whole of bench/RESULTS.md. */
    String markdown(Run run) {
        StringBuilder page = new StringBuilder("# Benchmark results\n\n");
        page.append("Command: `")
                .append(run.command())
                .append("` (")
                .append(run.smoke() ? "smoke: tiny counts, the numbers mean nothing" : "full run")
                .append(", ")
                .append(run.started())
                .append(" to ")
                .append(run.finished())
                .append(" UTC). How to read it: docs/benchmarks.md.\n\n");
        page.append(run.machine().strip()).append("\n\n");
        page.append("| # | measurement | load | throughput /s | p50 ms | p99 ms | p99.9 ms | vs ceiling | goal |\n");
        page.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
        rows().forEach(row -> page.append(row.markdown()).append('\n'));
        page.append("\n## Goals of issue #33, from this run\n\n");
        page.append(new Goals(figures(), cpu).markdown());
        if (!cpu.isEmpty()) {
            page.append("\n## CPU per job\n\n");
            page.append(
                    "Milliseconds of CPU per completed job, and in brackets % of one core, while each end-to-end step ran\n");
            page.append(
                    "(from /proc/<pid>/stat; postgres is every PostgreSQL process, rabbitmq the broker's beam.smp, other\n");
            page.append("everything this run did not start).\n\n");
            page.append(Report.cpuTable(cpu));
        }
        List<String> notes = notes();
        if (!notes.isEmpty()) {
            page.append("\n## Observed during the run\n\n");
            notes.forEach(note -> page.append(note).append('\n'));
        }
        if (!run.smoke() && run.analysis().isPresent()) {
            page.append('\n').append(run.analysis().get());
        }
        return page.toString();
    }

    /**
     * The growth steps' fixed rate: a share of the fresh-key throughput at the first concurrency, well
     * under capacity, so their latency reflects the stored data, not queueing.
     */
    int growthRate() {
        double fresh = number(figures().get("fresh")).orElse(0.0);
        return Math.max(GROWTH_RATE_FLOOR, (int) (fresh * GROWTH_RATE_SHARE));
    }

    /** A row of a load generator's (or pg-boss's) measurement: its throughput and latencies. */
    private static Row latencyRow(String id, String what, Observation o, String vsCeiling, String goal) {
        return new Row(
                id,
                what,
                "c" + o.text("concurrency"),
                o.text("throughput"),
                o.text("p50_ms"),
                o.text("p99_ms"),
                o.text("p999_ms"),
                vsCeiling,
                goal);
    }

    /** Jobs per second of an end-to-end step, "-" unless every job completed in time. */
    static String jobsPerSecond(Observation o) {
        Optional<Double> jobs = o.number("jobs");
        Optional<Double> completed = o.number("completed");
        Optional<Double> seconds = o.number("seconds").filter(s -> s > 0);
        if (jobs.isEmpty() || completed.isEmpty() || seconds.isEmpty() || completed.get() < jobs.get()) {
            return "-";
        }
        return String.format(Locale.ROOT, "%.1f", jobs.get() / seconds.get());
    }

    private static String twoDecimals(double value) {
        return String.format(Locale.ROOT, "%.2f", value);
    }

    /** A / B with two decimals; "-" when either is missing or B is zero. */
    static String ratio(String a, String b) {
        Optional<Double> below = number(b).filter(v -> v != 0);
        return number(a)
                .flatMap(x -> below.map(y -> String.format(Locale.ROOT, "%.2f", x / y)))
                .orElse("-");
    }

    /** A start's wall clock to ready, and the CPU it took when the run recorded that (logs before it did not). */
    private static String startTime(Observation o) {
        return o.text("ms") + " ms"
                + o.number("cpu_ms")
                        .map(cpu -> ", " + cpu.longValue() + " ms of CPU")
                        .orElse("");
    }

    /**
     * "TEXT: met", "TEXT: MISSED", or "TEXT: n/a" when the figure it judges was not measured. A goal
     * on a ratio judges the ratio as the table shows it, rounded to two decimals.
     */
    static String goal(String text, Optional<Boolean> met) {
        return text + ": " + met.map(m -> m ? "met" : "MISSED").orElse("n/a");
    }

    static Optional<Double> number(String value) {
        if (value == null) {
            return Optional.empty();
        }
        try {
            double number = Double.parseDouble(value);
            return Double.isNaN(number) ? Optional.empty() : Optional.of(number);
        } catch (NumberFormatException e) {
            return Optional.empty(); // "-": the step ran but measured nothing
        }
    }
}
