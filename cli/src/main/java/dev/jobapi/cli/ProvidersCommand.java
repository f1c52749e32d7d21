package dev.jobapi.cli;

import dev.jobapi.client.JobApiClient;
import dev.jobapi.client.model.AcceptanceRun;
import dev.jobapi.client.model.ProviderHealth;
import dev.jobapi.client.model.ProviderLimits;
import dev.jobapi.client.model.ProviderPauseState;
import dev.jobapi.client.model.ProviderStatus;
import dev.jobapi.client.model.ProviderUsage;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code jobctl providers}: who has earned automatic fallback, and running the acceptance fixtures. */
@Command(name = "providers", description = "Providers and their acceptance runs (operators).")
final class ProvidersCommand {

    private static final Duration POLL = Duration.ofSeconds(1);

    @ParentCommand
    Jobctl jobctl;

    @Spec
    CommandSpec spec;

    @Command(
            name = "list",
            description = "Every provider: has it earned automatic fallback (its latest acceptance run passed"
                    + " recently), and why not.")
    int list(@Mixin OutputFormat output) {
        PrintWriter out = spec.commandLine().getOut();
        List<ProviderStatus> providers = jobctl.client(Jobctl.OPERATOR).providers();
        return output.print(spec, providers, () -> {
            for (ProviderStatus provider : providers) {
                AcceptanceRun run = provider.latestRun();
                out.printf(
                        "%s  accepted=%s  latest=%s %s%n",
                        provider.name(),
                        provider.accepted(),
                        run == null ? "none" : run.state(),
                        run == null || run.finishedAt() == null ? "" : run.finishedAt());
                if (provider.refusal() != null) {
                    out.printf("    %s%n", provider.refusal());
                }
                if (provider.paused() != null) {
                    out.printf(
                            "    PAUSED by %s at %s: %s%n",
                            provider.paused().pausedBy(),
                            provider.paused().pausedAt(),
                            provider.paused().reason());
                }
                ProviderHealth health = provider.health();
                if (health != null && "open".equals(health.breaker())) {
                    out.printf(
                            "    BREAKER OPEN since %s, probes at %s: %s%n",
                            health.openedAt(), health.retryAt(), health.lastFault());
                }
                if (health != null && "half_open".equals(health.breaker())) {
                    out.printf(
                            "    BREAKER HALF_OPEN since %s, probes: %d counted (%d faults), %d under way: %s%n",
                            health.openedAt(),
                            health.probeCalls(),
                            health.probeFaults(),
                            health.probesUnderWay(),
                            health.lastFault());
                }
                if (health != null && health.limitedUntil() != null) {
                    out.printf("    RATE LIMITED until %s: %s%n", health.limitedUntil(), health.limitReason());
                }
                if (provider.limits() != null && provider.usage() != null) {
                    out.printf("    load: %s%n", load(provider.limits(), provider.usage()));
                }
            }
        });
    }

    /** "3/8 in flight, 41/60 requests and 9000/100000 tokens this minute"; a figure with no limit alone. */
    static String load(ProviderLimits limits, ProviderUsage usage) {
        return usage.inFlight() + of(limits.maxInFlight()) + " in flight, " + usage.requestsThisMinute()
                + of(limits.requestsPerMinute()) + " requests and " + usage.tokensThisMinute()
                + of(limits.tokensPerMinute()) + " tokens this minute";
    }

    private static String of(Integer limit) {
        return limit == null ? "" : "/" + limit;
    }

    @Command(
            name = "pause",
            description = "Pause NAME during its outage: its attempts are held (not called, not failed, not"
                    + " dead-lettered) until 'resume'. Audited.")
    int pause(
            @Parameters(paramLabel = "NAME") String name,
            @Option(names = "--reason", required = true, description = "Why (audited).") String reason,
            @Mixin OutputFormat output) {
        return printPause(jobctl.client(Jobctl.OPERATOR).pauseProvider(name, reason), output);
    }

    @Command(
            name = "resume",
            description = "Resume NAME: its held attempts are announced again and go on where they were. Audited.")
    int resume(
            @Parameters(paramLabel = "NAME") String name,
            @Option(names = "--reason", required = true, description = "Why (audited).") String reason,
            @Mixin OutputFormat output) {
        return printPause(jobctl.client(Jobctl.OPERATOR).resumeProvider(name, reason), output);
    }

    private int printPause(ProviderPauseState state, OutputFormat output) {
        return output.print(spec, state, () -> {
            PrintWriter out = spec.commandLine().getOut();
            if (state.paused()) {
                out.printf(
                        "%s paused by %s at %s: %s%n",
                        state.provider(),
                        state.pause().pausedBy(),
                        state.pause().pausedAt(),
                        state.pause().reason());
            } else {
                out.printf("%s running; %d held attempts announced again%n", state.provider(), state.reannounced());
            }
        });
    }

    @Command(
            name = "accept",
            description = "Run the acceptance fixtures against NAME (a worker runs them), follow the run with a"
                    + " progress bar and print each task's result. Exit 0 when it passed, 5 when it failed.")
    int accept(
            @Parameters(paramLabel = "NAME") String name,
            @Option(names = "--timeout", defaultValue = "600", description = "Seconds (default ${DEFAULT-VALUE}).")
                    long timeoutSeconds)
            throws InterruptedException {
        JobApiClient client = jobctl.client(Jobctl.OPERATOR);
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        AcceptanceRun run = client.requestAcceptance(name);
        err.printf("acceptance run %s of %s (requested by %s)%n", run.id(), name, run.requestedBy());
        err.flush();
        Progress progress = new Progress(err, System.console() != null);
        Instant deadline = Instant.now().plusSeconds(timeoutSeconds);
        while (true) {
            if (run.tasksTotal() == 0) {
                progress.show("  waiting for a worker to take the run...");
            } else {
                progress.bar("", run.tasksDone(), run.tasksTotal());
            }
            if (run.finished()) {
                break;
            }
            if (Instant.now().isAfter(deadline)) {
                progress.done();
                err.printf(
                        "jobctl: run %s still %s after %ds (is a worker running?)%n",
                        run.id(), run.state(), timeoutSeconds);
                return ExitCodes.STILL_RUNNING;
            }
            Thread.sleep(POLL.toMillis());
            run = client.acceptanceRun(name, run.id());
        }
        progress.done();
        for (AcceptanceRun.TaskResult result : run.results()) {
            out.printf(
                    "  %s  %s%s%n",
                    result.passed() ? "pass" : "FAIL",
                    result.task(),
                    result.reason() == null ? "" : ": " + result.reason());
        }
        out.printf(
                "%s: %s, %d/%d tasks at %s%n",
                name, run.state(), run.tasksPassed(), run.tasksTotal(), run.finishedAt());
        return run.passed() ? ExitCodes.OK : ExitCodes.UNSUCCESSFUL;
    }
}
