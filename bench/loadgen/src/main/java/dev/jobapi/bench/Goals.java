package dev.jobapi.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The goals of issue #33 ("done when") as a Markdown table, every figure computed from one run.
 * Reported, never asserted: a slow or busy machine must not fail a build.
 *
 * <p>The figures bench/run records, by name: {@code concurrency} (of the intake rows), {@code fresh}
 * and {@code fresh-p99} (POST /jobs fresh keys at that concurrency, jobs/s and ms), {@code
 * pgboss-send} (jobs/s), {@code e2e-w1} and {@code e2e-w2} (end to end with 1 and 2 workers, jobs/s),
 * {@code e2e-w1-commits} (commits per completed job with 1 worker, every process's) with {@code
 * -jobs}, {@code -relay} and {@code -loops} (its shares, {@link CommitShares}), {@code
 * api-rss-peak-mb} and {@code api-ready-ms} (restart).
 */
final class Goals {

    private final Map<String, String> figures;
    private final Map<String, CpuSplit> cpu;

    /**
     * @param figures name to value as bench/run recorded them; a missing name is a step that did not run
     * @param cpu the CPU split of each end-to-end step, by label (e2e-w1, e2e-w2, ...)
     */
    Goals(Map<String, String> figures, Map<String, CpuSplit> cpu) {
        this.figures = figures;
        this.cpu = cpu;
    }

    String markdown() {
        List<String> lines = new ArrayList<>();
        lines.add("| figure | issue #33: before, as it measured them | goal | this run | |");
        lines.add("| --- | --- | --- | --- | --- |");
        String c = figures.getOrDefault("concurrency", "16");

        Optional<Double> peer = ratio("fresh", "pgboss-send");
        lines.add(row(
                "POST /jobs fresh c" + c + " vs pg-boss's deduplicated `send`",
                "0.15",
                "≥ 0.5",
                format(peer),
                peer.map(r -> r >= 0.5)));

        Optional<Double> p99 = number("fresh-p99");
        lines.add(row(
                "POST /jobs fresh c" + c + ", p99",
                "-",
                "< 50 ms",
                p99.map(ms -> format(ms) + " ms").orElse("-"),
                p99.map(ms -> ms < 50)));

        Optional<Double> oneWorker = number("e2e-w1");
        lines.add(row(
                "end to end, 1 worker process, jobs/s",
                "166 (wrk, from outside)",
                "≥ 400",
                oneWorker.map(Goals::format).orElse("-"),
                oneWorker.map(jobs -> jobs >= 400)));

        Optional<Double> scaling = ratio("e2e-w2", "e2e-w1");
        String split = Optional.ofNullable(cpu.get("e2e-w2"))
                .map(s -> String.format(
                        Locale.ROOT,
                        "; with 2 workers the machine was %.0f%% busy, PostgreSQL used %.0f%% of a core",
                        s.busyPercent(),
                        s.percentOfCore().getOrDefault("postgres", 0.0)))
                .orElse("");
        lines.add(row(
                "end to end with 2 workers vs 1",
                "-",
                "grows until the machine is busy",
                scaling.map(r -> format(r) + "×").orElse("-") + split,
                Optional.empty()));

        lines.add(cpuRow("PostgreSQL", "postgres", "3.1–3.6 ms", 1.2));
        lines.add(cpuRow("worker", CpuSplit.WORKERS, "7.6 ms", 2.5));
        lines.add(cpuRow("api", "api", "1.7 ms", 1.0));

        // The relay's share is its own committed transactions (jobapi_outbox_batches_total); the
        // background loops commit by the second whatever the load, and are shown, not judged.
        Optional<Double> jobsCommits = number("e2e-w1-commits-jobs");
        String commits = jobsCommits
                .map(jobs -> format(jobs) + " + the relay's " + figures.get("e2e-w1-commits-relay")
                        + " (every process's " + figures.get("e2e-w1-commits") + ", the loops' and polling "
                        + figures.get("e2e-w1-commits-loops") + ")")
                .orElse("-");
        lines.add(row(
                "commits per completed job, 1 worker",
                "about 4",
                "≤ 3 plus the relay's share",
                commits,
                jobsCommits.map(jobs -> Math.round(jobs * 100) <= 300)));

        Optional<Double> rss = number("api-rss-peak-mb");
        Optional<Double> ready = number("api-ready-ms").map(ms -> ms / 1000);
        String footprint =
                rss.map(mb -> String.format(Locale.ROOT, "%.0f MB", mb)).orElse("-") + " / "
                        + ready.map(s -> format(s) + " s (restart)").orElse("-");
        lines.add(row(
                "api resident under load / ready",
                "356 MB / 3.8 s",
                "≤ 250 MB / ≤ 2 s",
                footprint,
                rss.isPresent() && ready.isPresent()
                        ? Optional.of(rss.get() <= 250 && ready.get() <= 2)
                        : Optional.empty()));
        return String.join("\n", lines) + "\n";
    }

    /** CPU per completed job of one process (or the workers' sum) with 1 worker, against its goal. */
    private String cpuRow(String who, String process, String before, double goalMs) {
        Optional<Double> ms = Optional.ofNullable(cpu.get("e2e-w1"))
                .map(s -> s.msPerJob().get(process))
                .filter(value -> !value.isNaN());
        return row(
                who + " CPU per completed job (1 worker)",
                before,
                "≤ " + goalMs + " ms",
                ms.map(value -> format(value) + " ms").orElse("-"),
                ms.map(value -> value <= goalMs));
    }

    private Optional<Double> number(String name) {
        try {
            return Optional.ofNullable(figures.get(name))
                    .map(Double::parseDouble)
                    .filter(v -> !v.isNaN());
        } catch (NumberFormatException e) {
            return Optional.empty(); // "-": the step ran but measured nothing
        }
    }

    private Optional<Double> ratio(String numerator, String denominator) {
        Optional<Double> below = number(denominator).filter(v -> v != 0);
        return number(numerator).flatMap(a -> below.map(b -> a / b));
    }

    private static String format(Optional<Double> value) {
        return value.map(Goals::format).orElse("-");
    }

    private static String format(double value) {
        return String.format(Locale.ROOT, "%.2f", value);
    }

    private static String row(String figure, String before, String goal, String measured, Optional<Boolean> met) {
        String verdict = met.map(m -> m ? "met" : "MISSED").orElse("-");
        return "| " + String.join(" | ", figure, before, goal, measured, verdict) + " |";
    }
}
