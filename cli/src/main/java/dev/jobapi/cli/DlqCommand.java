package dev.jobapi.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.jobapi.client.JobApiClient;
import dev.jobapi.client.model.DeadLetter;
import dev.jobapi.client.model.DeadLetterPage;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code jobctl dlq}: the dead letters (rows the api's mover stored), for operators: list, count,
 * show, and replay or discard by ids, with a dry run; by filter, {@code jobctl bulk run}.
 */
@Command(
        name = "dlq",
        mixinStandardHelpOptions = true,
        description = "Dead letters (operators): list, count, show by filter; replay, discard by ids.")
final class DlqCommand {

    @ParentCommand
    Jobctl jobctl;

    @Spec
    CommandSpec spec;

    /** The filter every subcommand takes. */
    static final class Filter {
        @Option(names = "--owner", description = "The job's owner.")
        String owner;

        @Option(names = "--provider", description = "The attempt's provider.")
        String provider;

        @Option(names = "--reason", description = "The broker's reason: rejected, delivery_limit, expired, maxlen.")
        String reason;

        @Option(names = "--since", description = "Dead-lettered at or after (ISO-8601, e.g. 2026-12-03T14:00:00Z).")
        String since;

        @Option(names = "--until", description = "Dead-lettered before (ISO-8601).")
        String until;

        Map<String, String> query() {
            Map<String, String> query = new LinkedHashMap<>();
            put(query, "owner", owner);
            put(query, "provider", provider);
            put(query, "reason", reason);
            put(query, "since", since);
            put(query, "until", until);
            return query;
        }

        private static void put(Map<String, String> query, String key, String value) {
            if (value != null && !value.isEmpty()) {
                query.put(key, value);
            }
        }
    }

    @Command(
            name = "list",
            mixinStandardHelpOptions = true,
            description = "Dead letters, oldest first: id, attempt, job, owner, provider, reason, deaths.")
    int list(
            @Mixin Filter filter,
            @Mixin OutputFormat output,
            @Option(names = "--state", description = "pending (default), replayed, skipped, discarded, all.")
                    String state,
            @Option(names = "--limit", defaultValue = "50", description = "At most this many (default 50).") int limit,
            @Option(names = "--after", description = "The previous page's cursor ('next').") String after) {
        Map<String, String> query = filter.query();
        if (state != null) {
            query.put("state", state);
        }
        DeadLetterPage page = client().deadLetters(query, after, limit);
        return output.print(spec, page, () -> {
            PrintWriter out = spec.commandLine().getOut();
            out.printf("matching: %d%n", page.depth());
            for (DeadLetter letter : page.items()) {
                out.printf(
                        "%s  attempt=%s  job=%s  owner=%s  provider=%s  reason=%s  deaths=%d  at=%s  %s%n",
                        letter.id(),
                        dash(letter.attemptId()),
                        dash(letter.jobId()),
                        dash(letter.ownerId()),
                        dash(letter.provider()),
                        letter.reason(),
                        letter.deathCount(),
                        letter.deadLetteredAt(),
                        letter.state());
            }
            if (page.next() != null) {
                out.printf("next page: --after %s%n", page.next());
            }
        });
    }

    @Command(name = "count", mixinStandardHelpOptions = true, description = "How many pending dead letters match.")
    int count(@Mixin Filter filter, @Mixin OutputFormat output) {
        long count = client().countDeadLetters(filter.query());
        return output.print(
                spec, Map.of("count", count), () -> spec.commandLine().getOut().println(count));
    }

    @Command(name = "show", mixinStandardHelpOptions = true, description = "One dead letter in full, as JSON.")
    int show(@Parameters(paramLabel = "ID") String id) {
        long before;
        try {
            before = Long.parseLong(id) - 1;
        } catch (NumberFormatException e) {
            spec.commandLine().getErr().printf("jobctl: no dead letter %s%n", id);
            return ExitCodes.REFUSED;
        }
        List<DeadLetter> items = client().deadLetters(Map.of("state", "all"), Long.toString(before), 1)
                .items();
        if (items.isEmpty() || !items.get(0).id().equals(id)) {
            spec.commandLine().getErr().printf("jobctl: no dead letter %s%n", id);
            return ExitCodes.REFUSED;
        }
        OutputFormat.printJson(spec, items.get(0));
        return ExitCodes.OK;
    }

    @Command(
            name = "replay",
            mixinStandardHelpOptions = true,
            description = "Replay dead letters by id: each goes back to work once (skipped when its attempt has"
                    + " nothing left to do). Asks unless --yes. By filter: jobctl bulk run dlq-replay.")
    int replay(
            @Parameters(paramLabel = "ID", arity = "1..*", description = "Dead letters by id.") List<String> ids,
            @Mixin OutputFormat output,
            @Option(names = "--dry-run", description = "Count and sample; change nothing.") boolean dryRun,
            @Option(names = "--yes", description = "Do not ask for confirmation.") boolean yes,
            @Option(names = "--note", description = "Why (audited).") String note) {
        return act(false, ids, output, dryRun, yes, note);
    }

    @Command(
            name = "discard",
            mixinStandardHelpOptions = true,
            description = "Discard dead letters by id, with a reason (--note, audited). Asks unless --yes."
                    + " By filter: jobctl bulk run dlq-discard.")
    int discard(
            @Parameters(paramLabel = "ID", arity = "1..*", description = "Dead letters by id.") List<String> ids,
            @Mixin OutputFormat output,
            @Option(names = "--dry-run", description = "Count and sample; change nothing.") boolean dryRun,
            @Option(names = "--yes", description = "Do not ask for confirmation.") boolean yes,
            @Option(names = "--note", required = true, description = "Why (audited).") String note) {
        return act(true, ids, output, dryRun, yes, note);
    }

    private int act(boolean discard, List<String> ids, OutputFormat output, boolean dryRun, boolean yes, String note) {
        ObjectNode body = JobApiClient.json().createObjectNode();
        ids.forEach(body.putArray("ids")::add);
        if (note != null) {
            body.put("reason", note);
        }
        JobApiClient client = client();
        String verb = discard ? "discard" : "replay";
        if (!dryRun && !yes) {
            JsonNode preview = client.actOnDeadLetters(discard, body.deepCopy().put("dryRun", true));
            long n = discard
                    ? preview.path("discarded").asLong()
                    : preview.path("replayed").asLong()
                            + preview.path("skipped").asLong();
            spec.commandLine().getErr().printf("%s %d dead letter(s)? [y/N] ", verb, n);
            spec.commandLine().getErr().flush();
            String answer = System.console() == null ? null : System.console().readLine();
            if (answer == null || !answer.trim().equalsIgnoreCase("y")) {
                spec.commandLine().getErr().println("jobctl: not confirmed (--yes to skip the question)");
                return ExitCodes.REFUSED;
            }
        }
        if (dryRun) {
            body.put("dryRun", true);
        }
        JsonNode result = client.actOnDeadLetters(discard, body);
        return output.print(spec, result, () -> {
            spec.commandLine()
                    .getOut()
                    .printf(
                            "%s%s: replayed %d, skipped %d (attempt already settled), discarded %d, not replayable %d%n",
                            dryRun ? "dry run, nothing changed; would " : "",
                            verb,
                            result.path("replayed").asLong(),
                            result.path("skipped").asLong(),
                            result.path("discarded").asLong(),
                            result.path("notReplayable").asLong());
        });
    }

    private static String dash(Object value) {
        return value == null ? "-" : value.toString();
    }

    private JobApiClient client() {
        return jobctl.client(Jobctl.OPERATOR);
    }
}
