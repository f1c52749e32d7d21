package dev.jobapi.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.jobapi.client.JobApiClient;
import java.io.PrintWriter;
import java.time.Duration;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code jobctl bulk}: bulk actions by filter for operators (docs/api.md#bulk-actions). {@code run}
 * makes the dry run, shows its count and sample, asks unless {@code --yes}, executes with the dry
 * run's token and follows the progress of a large set until it is done.
 */
@Command(
        name = "bulk",
        description = "Bulk actions by filter (operators): run one with a dry run and a confirmation, list, show.")
final class BulkCommand {

    private static final Duration POLL = Duration.ofSeconds(1);

    @ParentCommand
    Jobctl jobctl;

    @Spec
    CommandSpec spec;

    /** The one filter of every bulk action. */
    static final class Filter {
        @Option(names = "--owner", description = "The job's owner.")
        String owner;

        @Option(names = "--provider", description = "The provider (a dead letter's or quarantined attempt's, a job's).")
        String provider;

        @Option(names = "--state", description = "A job's state; dead letters: pending only.")
        String state;

        @Option(
                names = "--reason",
                description = "A dead letter's broker reason (exact), or text in a job's review reason or an"
                        + " attempt's reason.")
        String reason;

        @Option(names = "--since", description = "At or after (ISO-8601, e.g. 2026-12-03T14:00:00Z).")
        String since;

        @Option(names = "--until", description = "Before (ISO-8601).")
        String until;

        ObjectNode json() {
            ObjectNode filter = JobApiClient.json().createObjectNode();
            put(filter, "owner", owner);
            put(filter, "provider", provider);
            put(filter, "state", state);
            put(filter, "reason", reason);
            put(filter, "since", since);
            put(filter, "until", until);
            return filter;
        }

        private static void put(ObjectNode filter, String name, String value) {
            if (value != null && !value.isEmpty()) {
                filter.put(name, value);
            }
        }
    }

    @Command(
            name = "run",
            description = "Dry run the action on the filter, show the count and a sample, ask unless --yes, then"
                    + " execute it with the dry run's token and show its progress until it is done.")
    int run(
            @Parameters(
                            paramLabel = "ACTION",
                            description = "dlq-replay, dlq-discard, job-cancel, job-retry or quarantine-fail.")
                    String action,
            @Mixin Filter filter,
            @Option(names = "--note", description = "Why (audited); required by dlq-discard and quarantine-fail.")
                    String note,
            @Option(names = "--dry-run", description = "Count and sample only; change nothing.") boolean dryRun,
            @Option(names = "--yes", description = "Do not ask for confirmation.") boolean yes,
            @Mixin OutputFormat output) {
        JobApiClient client = jobctl.client(Jobctl.OPERATOR);
        PrintWriter err = spec.commandLine().getErr();
        JsonNode preview = client.bulkDryRun(action, filter.json());
        long count = preview.path("count").asLong();
        if (dryRun) {
            return output.print(spec, preview, () -> printPreview(preview));
        }
        printPreview(preview);
        if (count == 0) {
            err.println("jobctl: nothing matches; nothing to do");
            return ExitCodes.OK;
        }
        if (!yes) {
            err.printf("%s on %d item(s)? [y/N] ", action, count);
            err.flush();
            String answer = System.console() == null ? null : System.console().readLine();
            if (answer == null || !answer.trim().equalsIgnoreCase("y")) {
                err.println("jobctl: not confirmed (--yes to skip the question)");
                return ExitCodes.REFUSED;
            }
        }
        JsonNode done = followToTheEnd(
                client,
                client.bulkExecute(action, filter.json(), preview.path("token").asText(), note),
                err);
        return output.print(spec, done, () -> printSummary(done));
    }

    /** Shows the action's progress on {@code err} until it is done; returns its last state. */
    private JsonNode followToTheEnd(JobApiClient client, JsonNode progress, PrintWriter err) {
        Progress line = new Progress(err, System.console() != null);
        while (!"done".equals(progress.path("state").asText())) {
            line.bar(
                    "bulk action " + progress.path("id").asText() + " ",
                    progress.path("processed").asInt(),
                    progress.path("total").asInt());
            sleep();
            progress = client.bulkAction(progress.path("id").asText());
        }
        line.done();
        return progress;
    }

    @Command(name = "list", description = "Bulk actions, newest first, with their progress.")
    int list(
            @Option(names = "--limit", defaultValue = "20", description = "1-200 (default ${DEFAULT-VALUE}).")
                    int limit,
            @Mixin OutputFormat output) {
        JsonNode actions = jobctl.client(Jobctl.OPERATOR).bulkActions(limit);
        return output.print(spec, actions, () -> {
            for (JsonNode action : actions) {
                printSummary(action);
            }
        });
    }

    @Command(name = "show", description = "One bulk action's progress, outcome counts and refusals.")
    int show(@Parameters(paramLabel = "ID") String id, @Mixin OutputFormat output) {
        JsonNode action = jobctl.client(Jobctl.OPERATOR).bulkAction(id);
        return output.print(spec, action, () -> {
            printSummary(action);
            for (JsonNode refusal : action.path("refusals")) {
                spec.commandLine()
                        .getOut()
                        .printf(
                                "    refused %s: %s%n",
                                refusal.path("target").asText(),
                                refusal.path("detail").asText());
            }
        });
    }

    private void printPreview(JsonNode preview) {
        PrintWriter out = spec.commandLine().getOut();
        out.printf(
                "dry run: %s %s matches %d%n",
                preview.path("action").asText(),
                preview.path("filter"),
                preview.path("count").asLong());
        for (JsonNode item : preview.path("sample")) {
            out.printf(
                    "  %s  job=%s  owner=%s  provider=%s  %s  %s%n",
                    item.path("id").asText(),
                    item.path("jobId").asText("-"),
                    item.path("owner").asText("-"),
                    item.path("provider").asText("-"),
                    item.path("state").asText("-"),
                    item.path("reason").asText(""));
        }
        out.flush();
    }

    private void printSummary(JsonNode action) {
        spec.commandLine()
                .getOut()
                .printf(
                        "bulk action %s  %s  %s  %d/%d  done=%d skipped=%d refused=%d  by %s%n",
                        action.path("id").asText(),
                        action.path("action").asText(),
                        action.path("state").asText(),
                        action.path("processed").asInt(),
                        action.path("total").asInt(),
                        action.path("done").asInt(),
                        action.path("skipped").asInt(),
                        action.path("refused").asInt(),
                        action.path("requestedBy").asText());
    }

    private static void sleep() {
        try {
            Thread.sleep(POLL.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while following the bulk action", e);
        }
    }
}
