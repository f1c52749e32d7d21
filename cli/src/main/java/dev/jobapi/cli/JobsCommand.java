package dev.jobapi.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.jobapi.client.JobApiClient;
import dev.jobapi.client.model.Attempt;
import dev.jobapi.client.model.Job;
import dev.jobapi.client.model.JobPage;
import dev.jobapi.client.model.JobState;
import dev.jobapi.client.model.JobSummary;
import dev.jobapi.client.model.TimelineEvent;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code jobctl jobs}: the caller's jobs, one job, its history, its output; and following one. */
@Command(name = "jobs", description = "List, show and follow jobs.")
final class JobsCommand {

    private static final List<String> USER = List.of("user");
    private static final int PREVIEW = 40;

    @ParentCommand
    Jobctl jobctl;

    @Spec
    CommandSpec spec;

    @Command(name = "list", description = "The caller's jobs, newest first (GET /jobs).")
    int list(
            @Option(names = "--state", description = "accepted, running, needs_review, completed or cancelled.")
                    String state,
            @Option(names = "--limit", defaultValue = "20", description = "1-100 (default ${DEFAULT-VALUE}).")
                    int limit,
            @Option(names = "--cursor", description = "The next page's cursor, as a previous page printed it.")
                    String cursor,
            @Mixin OutputFormat output) {
        JobState filter = state == null ? null : parseState(state);
        JobPage page = jobctl.client(USER).jobs(filter, limit, cursor);
        return output.print(spec, page, () -> {
            PrintWriter out = spec.commandLine().getOut();
            for (JobSummary job : page.items()) {
                String prompt = job.input() == null || job.input().prompt() == null
                        ? ""
                        : job.input().prompt();
                out.printf(
                        "%s  %-12s %-8s %s  %s%n",
                        job.id(),
                        job.state().wireName(),
                        job.provider(),
                        job.createdAt(),
                        prompt.length() > PREVIEW ? prompt.substring(0, PREVIEW) + "..." : prompt);
            }
            if (page.nextCursor() != null) {
                spec.commandLine().getErr().printf("more: --cursor %s%n", page.nextCursor());
            }
        });
    }

    @Command(name = "show", description = "One job with its attempts and the actions allowed now, as JSON.")
    int show(@Parameters(paramLabel = "JOB") UUID jobId) {
        OutputFormat.printJson(spec, jobctl.client(USER).job(jobId));
        return ExitCodes.OK;
    }

    @Command(name = "timeline", description = "The job's history in commit order.")
    int timeline(@Parameters(paramLabel = "JOB") UUID jobId, @Mixin OutputFormat output) {
        PrintWriter out = spec.commandLine().getOut();
        List<TimelineEvent> events = jobctl.client(USER).timeline(jobId);
        return output.print(spec, events, () -> {
            for (TimelineEvent event : events) {
                printEvent(out, event.at(), event.kind(), event.attemptId(), event.detail());
            }
        });
    }

    @Command(
            name = "events",
            description = "Follow the job's events as they commit (its event stream), from the first, until the job"
                    + " ends; a broken stream is resumed after the last event shown. -o json prints one JSON"
                    + " object a line. Exits 0 when the job completed, 1 when it was cancelled.")
    int events(@Parameters(paramLabel = "JOB") UUID jobId, @Mixin OutputFormat output) {
        PrintWriter out = spec.commandLine().getOut();
        Job done = jobctl.client(USER).follow(jobId, event -> {
            if (output.json()) {
                try {
                    out.println(JobApiClient.json().writeValueAsString(event));
                } catch (JsonProcessingException e) {
                    throw new UncheckedIOException(e);
                }
            } else {
                printEvent(out, event.at(), event.kind(), event.attemptId(), event.detail());
            }
            out.flush();
        });
        return done.state() == JobState.COMPLETED ? ExitCodes.OK : ExitCodes.UNSUCCESSFUL;
    }

    @Command(name = "output", description = "The winning attempt's patch.")
    int output(@Parameters(paramLabel = "JOB") UUID jobId) {
        PrintWriter out = spec.commandLine().getOut();
        out.print(jobctl.client(USER).output(jobId));
        out.flush();
        return ExitCodes.OK;
    }

    @Command(name = "wait", description = "Follow a job with a progress line until it is completed or cancelled.")
    int await(
            @Parameters(paramLabel = "JOB") UUID jobId,
            @Option(names = "--timeout", defaultValue = "600", description = "Seconds (default ${DEFAULT-VALUE}).")
                    long timeoutSeconds) {
        return follow(jobctl.client(USER), jobId, Duration.ofSeconds(timeoutSeconds), spec);
    }

    /** Polls the job until terminal with a progress line on stderr; prints the end state on stdout. */
    static int follow(JobApiClient client, UUID jobId, Duration timeout, CommandSpec spec) {
        Progress progress = new Progress(spec.commandLine().getErr(), System.console() != null);
        Instant start = Instant.now();
        Job done;
        try {
            done = client.awaitTerminal(jobId, timeout, job -> progress.show(progressLine(job, start)));
        } finally {
            progress.done();
        }
        PrintWriter out = spec.commandLine().getOut();
        if (done.state() == JobState.COMPLETED) {
            Attempt winner = done.attempts().stream()
                    .filter(a -> a.id().equals(done.winningAttemptId()))
                    .findFirst()
                    .orElseThrow();
            out.printf("job %s completed by attempt %s (%s)%n", done.id(), winner.id(), winner.provider());
            return ExitCodes.OK;
        }
        out.printf("job %s %s%n", done.id(), done.state().wireName());
        return ExitCodes.UNSUCCESSFUL;
    }

    /** One timeline event a line: when, what, the attempt (or -), the detail. */
    private static void printEvent(PrintWriter out, Instant at, String kind, UUID attemptId, String detail) {
        out.printf("%s  %-24s %s  %s%n", at, kind, attemptId == null ? "-" : attemptId, detail == null ? "" : detail);
    }

    static String progressLine(Job job, Instant start) {
        String attempts = job.attempts().stream()
                .map(a -> a.provider() + " " + a.state().wireName())
                .collect(Collectors.joining(", "));
        long seconds = Duration.between(start, Instant.now()).toSeconds();
        String review = job.state() == JobState.NEEDS_REVIEW ? " (a reviewer or a late result moves it on)" : "";
        return String.format(
                "  %3ds  job %s  %s%s  attempts: %s",
                seconds, job.id(), job.state().wireName(), review, attempts);
    }

    private JobState parseState(String state) {
        for (JobState candidate : JobState.values()) {
            if (candidate != JobState.UNRECOGNIZED && candidate.wireName().equals(state)) {
                return candidate;
            }
        }
        throw new ParameterException(spec.commandLine().getSubcommands().get("list"), "unknown --state " + state);
    }
}
