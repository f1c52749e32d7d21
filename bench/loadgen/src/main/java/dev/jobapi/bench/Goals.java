package dev.jobapi.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The goals of issue #15 as a Markdown table, every ratio computed from the figures of one run.
 * Reported, never asserted: a slow or busy machine must not fail a build.
 *
 * <p>The figures bench/run records, by name: {@code concurrency} (of the intake rows), {@code fresh}
 * (POST /jobs fresh keys, jobs/s), {@code least-intake} and {@code least-pipeline} (pgbench of
 * bench/sql/least, jobs/s), {@code e2e-w1} and {@code e2e-w2} (end to end with 1 and 2 workers,
 * jobs/s), {@code pgboss-send} (jobs/s), {@code api-rss-peak-mb}, {@code api-ready-ms} (restart),
 * {@code growth-post-p99-first}/{@code -last} and {@code growth-get-p99-first}/{@code -last} (ms).
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
        lines.add("| figure | issue #15: before | goal | this run | |");
        lines.add("| --- | --- | --- | --- | --- |");
        String c = figures.getOrDefault("concurrency", "16");

        Optional<Double> intake = ratio("fresh", "least-intake");
        lines.add(row(
                "POST /jobs fresh c" + c + " / least intake SQL",
                "0.03–0.04",
                "≥ 0.25",
                format(intake),
                intake.map(r -> r >= 0.25)));

        Optional<Double> pipeline = ratio("e2e-w1", "least-pipeline");
        lines.add(row(
                "end to end, 1 worker (the `bin/dev up` stack) / least pipeline SQL",
                "0.03",
                "≥ 0.10",
                format(pipeline),
                pipeline.map(r -> r >= 0.10)));

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
                "1.15×",
                "grows until the machine or PostgreSQL saturates",
                scaling.map(r -> format(r) + "×").orElse("-") + split,
                Optional.empty()));

        Optional<Double> workerCpu = Optional.ofNullable(cpu.get("e2e-w1"))
                .map(s -> s.msPerJob().get(CpuSplit.WORKERS))
                .filter(ms -> !ms.isNaN());
        lines.add(row(
                "worker CPU per job (1 worker)",
                "≈ 25 ms",
                "≤ 5 ms",
                workerCpu.map(ms -> format(ms) + " ms").orElse("-"),
                workerCpu.map(ms -> ms <= 5)));

        Optional<Double> peer = ratio("fresh", "pgboss-send");
        lines.add(row(
                "POST /jobs fresh vs pg-boss `send`, c" + c, "≈ 0.15", "≥ 1.0", format(peer), peer.map(r -> r >= 1.0)));

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

        Optional<Double> post = ratio("growth-post-p99-last", "growth-post-p99-first");
        Optional<Double> get = ratio("growth-get-p99-last", "growth-get-p99-first");
        lines.add(row(
                "growth, p99 at the largest size / at the smallest (POST; GET)",
                "≤ 1.04",
                "≤ 1.1",
                format(post) + "; " + format(get),
                post.isPresent() && get.isPresent()
                        ? Optional.of(post.get() <= 1.1 && get.get() <= 1.1)
                        : Optional.empty()));
        return String.join("\n", lines) + "\n";
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
