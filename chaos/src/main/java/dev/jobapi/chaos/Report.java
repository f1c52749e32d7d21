package dev.jobapi.chaos;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/** The soak's report in Markdown: what was sent, what was broken, what was found. */
final class Report {

    private static final int DETAILS_PER_INVARIANT = 25;

    private Report() {}

    record Run(
            long seed,
            int minutes,
            int jobs,
            Instant startedAt,
            Duration took,
            Duration drainTook,
            Duration webhooksTook,
            Map<ProviderFault, Long> providerFaults,
            Map<Faults.Kind, Integer> faults,
            List<String> faultLog,
            int faultsSkipped,
            int drainFollowUps,
            Duration drainBudget,
            Load.Pace pace,
            Duration loadAndDrain,
            int rolledProcesses,
            int forcedKills,
            Duration queueRedeclaredAfter,
            boolean cluster,
            boolean asyncStandby,
            List<String> failedInjections,
            String serviceSection,
            List<String> serviceViolations) {

        /** No fault failed or did nothing, and the clustered rig's enforced checks held. */
        boolean clean() {
            return failedInjections.isEmpty() && serviceViolations.isEmpty();
        }
    }

    static String render(Run run, ClientLedger.Saved ledger, Checker.Result result) {
        StringBuilder out = new StringBuilder();
        out.append("# Chaos soak report\n\n");
        if (run != null) {
            out.append("- seed ")
                    .append(run.seed())
                    .append(", ")
                    .append(run.minutes())
                    .append(" minute(s) of load and faults, ")
                    .append(run.jobs())
                    .append(" jobs planned\n");
            out.append("- started ")
                    .append(run.startedAt())
                    .append(", took ")
                    .append(run.took().toSeconds())
                    .append(" s (drain: ")
                    .append(
                            run.drainTook() == null
                                    ? "NOT REACHED: budget spent or no change for 90 s"
                                    : run.drainTook().toSeconds() + " s")
                    .append(" of at most ")
                    .append(run.drainBudget().toSeconds())
                    .append(" s; webhook deliveries after it: ")
                    .append(
                            run.webhooksTook() == null
                                    ? "STILL PENDING after " + Webhooks.SETTLE_BUDGET.toSeconds() + " s"
                                    : "none pending after " + run.webhooksTook().toSeconds() + " s")
                    .append(")\n");
            out.append(
                    run.cluster()
                            ? "- system: 2 api processes, 3 worker processes, fake provider, three RabbitMQ nodes clustered,"
                                    + " a PostgreSQL primary with a streaming standby (chaos/run --cluster)\n"
                            : "- system: 2 api processes, 3 worker processes, fake provider, own PostgreSQL and RabbitMQ\n");
            out.append("- rerun: `chaos/run ")
                    .append(run.cluster() ? "--cluster " : "")
                    .append(run.asyncStandby() ? "--async-standby " : "")
                    .append("--minutes ")
                    .append(run.minutes())
                    .append(" --jobs ")
                    .append(run.jobs())
                    .append(" --seed ")
                    .append(run.seed())
                    .append("`\n");
        } else {
            out.append("- re-check of a kept stack (`chaos/run check`)\n");
        }

        if (run != null) {
            Load.Pace pace = run.pace();
            Object completed = result.figures().get("completed jobs");
            double completedRate = completed instanceof Long n
                    ? n / Math.max(1.0, run.loadAndDrain().toMillis() / 1000.0)
                    : 0;
            out.append("\n## Pace\n\n| what | jobs/s |\n| --- | ---: |\n");
            out.append(String.format("| planned (jobs over the window) | %.1f |%n", pace.plannedPerSecond()));
            out.append(String.format(
                    "| **offered** (jobs submitted per second of the submitting span) | **%.1f** |%n",
                    pace.offeredPerSecond()));
            out.append(String.format(
                    "| acknowledged with a 2xx (per second up to the last acknowledgement) | %.1f |%n",
                    pace.acknowledgedPerSecond()));
            out.append(String.format(
                    "| **achieved**: completed per second of load and drain (%d s) | **%.1f** |%n",
                    run.loadAndDrain().toSeconds(), completedRate));
            out.append(String.format(
                    "%nSessions that started more than 1 s behind their schedule (the client fell behind): %d;"
                            + " the latest started %.1f s late.%n",
                    pace.lateStarts(), pace.maxLatenessMs() / 1000.0));
        }

        out.append("\n## Client load\n\n| what | count |\n| --- | ---: |\n");
        long duplicates = 0;
        for (ClientLedger.Count count : ClientLedger.Count.values()) {
            long value = ledger.counts().getOrDefault(count, 0L);
            out.append("| ").append(count.label).append(" | ").append(value).append(" |\n");
            if (count == ClientLedger.Count.DOUBLE_SUBMITS
                    || count == ClientLedger.Count.RELOADS
                    || count == ClientLedger.Count.RETRIES
                    || count == ClientLedger.Count.FALLBACK_REPLAYS) {
                duplicates += value;
            }
        }
        out.append("| **duplicate requests sent** (double submits + reloads + retries + fallback replays) | **")
                .append(duplicates)
                .append("** |\n");
        if (run != null) {
            out.append("| fallbacks the drain asked for (jobs whose attempts all failed) | ")
                    .append(run.drainFollowUps())
                    .append(" |\n");

            out.append(
                    "\n## Provider faults (fake provider scripts, one per job)\n\n| fault | jobs |\n| --- | ---: |\n");
            run.providerFaults().forEach((fault, count) -> out.append("| ")
                    .append(fault.name().toLowerCase().replace('_', ' '))
                    .append(" | ")
                    .append(count)
                    .append(" |\n"));

            out.append("\n## Faults injected\n\n| kind | count |\n| --- | ---: |\n");
            for (Faults.Kind kind : Faults.Kind.values()) {
                out.append("| ")
                        .append(kind.label)
                        .append(" | ")
                        .append(run.faults().getOrDefault(kind, 0))
                        .append(" |\n");
            }
            if (run.faultsSkipped() > 0) {
                out.append("| skipped: still due when the load window ended (a slow machine) | ")
                        .append(run.faultsSkipped())
                        .append(" |\n");
            }
            out.append("\nRolling restarts: ")
                    .append(run.rolledProcesses())
                    .append(" processes stopped with SIGTERM and started again, ")
                    .append(run.forcedKills())
                    .append(" of them still running after the ")
                    .append(Faults.GRACE_SECONDS)
                    .append(" s grace and SIGKILLed.");
            if (run.faults().getOrDefault(Faults.Kind.WORK_QUEUE_DELETED, 0) > 0) {
                out.append(" Work queue `")
                        .append(Checker.WORK_QUEUE)
                        .append("` after its deletion: ")
                        .append(
                                run.queueRedeclaredAfter() == null
                                        ? "**never declared again** by the end of the drain"
                                        : String.format(
                                                "declared again by the services %.1f s later",
                                                run.queueRedeclaredAfter().toMillis() / 1000.0))
                        .append('.');
            }
            out.append("\n\n```\n");
            run.faultLog().forEach(line -> out.append(line).append('\n'));
            out.append("```\n");
            if (!run.failedInjections().isEmpty()) {
                out.append("\n## Faults that failed or did nothing (each fails the run)\n\n");
                run.failedInjections()
                        .forEach(line -> out.append("- ").append(line).append('\n'));
            }
            out.append(run.serviceSection());
            if (!run.serviceViolations().isEmpty()) {
                out.append("\n### Service checks that failed (each fails the run)\n\n");
                run.serviceViolations()
                        .forEach(line -> out.append("- ").append(line).append('\n'));
            }
        }

        out.append("\n## Figures after the drain\n\n");
        result.figures()
                .forEach((name, value) ->
                        out.append("- ").append(name).append(": ").append(value).append('\n'));

        out.append("\n## Invariants\n\n| # | invariant | violations |\n| --- | --- | ---: |\n");
        int number = 1;
        for (var entry : result.violations().entrySet()) {
            out.append("| ")
                    .append(number++)
                    .append(" | ")
                    .append(entry.getKey().title)
                    .append(" | ")
                    .append(entry.getValue().size())
                    .append(" |\n");
        }
        for (var entry : result.violations().entrySet()) {
            if (entry.getValue().isEmpty()) {
                continue;
            }
            out.append("\n### ").append(entry.getKey().title).append("\n\n");
            entry.getValue().stream()
                    .limit(DETAILS_PER_INVARIANT)
                    .forEach(line -> out.append("- ").append(line).append('\n'));
            if (entry.getValue().size() > DETAILS_PER_INVARIANT) {
                out.append("- ... and ")
                        .append(entry.getValue().size() - DETAILS_PER_INVARIANT)
                        .append(" more\n");
            }
        }
        if (!ledger.unexpectedAnswers().isEmpty()) {
            out.append("\n## Answers outside the contract (not an invariant; look at them)\n\n");
            ledger.unexpectedAnswers()
                    .forEach(line -> out.append("- ").append(line).append('\n'));
        }
        out.append("\n**")
                .append(
                        result.clean() && (run == null || run.clean())
                                ? "PASS: zero violations"
                                : "FAIL: violations found")
                .append("**\n");
        return out.toString();
    }
}
