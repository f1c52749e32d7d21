package dev.jobapi.cli;

import dev.jobapi.client.JobApiClient;
import dev.jobapi.client.model.DeadLetter;
import dev.jobapi.client.model.DeadLetterPage;
import dev.jobapi.client.model.ReplayResult;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code jobctl dlq}: the dead-letter queue, for operators. */
@Command(name = "dlq", description = "Dead-lettered attempt messages (operators).")
final class DlqCommand {

    /** The page size when walking the whole queue: the api's largest. */
    private static final int PAGE = 500;
    /** Ids per replay request, so the progress bar moves and one request stays small. */
    private static final int REPLAY_BATCH = 25;

    @ParentCommand
    Jobctl jobctl;

    @Spec
    CommandSpec spec;

    @Command(name = "list", description = "Dead letters without consuming them: id, attempt, job, reason, deaths.")
    int list(
            @Option(names = "--limit", defaultValue = "50") int limit,
            @Option(names = "--offset", defaultValue = "0") int offset) {
        DeadLetterPage page = client().deadLetters(offset, limit);
        PrintWriter out = spec.commandLine().getOut();
        out.printf("depth: %d%n", page.depth());
        for (DeadLetter letter : page.items()) {
            out.printf(
                    "%s  attempt=%s  job=%s  reason=%s  deaths=%d  last=%s%n",
                    letter.id(),
                    letter.attemptId() == null ? "-" : letter.attemptId(),
                    letter.jobId() == null ? "-" : letter.jobId(),
                    letter.reason(),
                    letter.deathCount(),
                    letter.lastDeathAt());
        }
        return ExitCodes.OK;
    }

    @Command(name = "show", description = "One dead-lettered message in full, as JSON.")
    int show(@Parameters(paramLabel = "ID") String id) {
        JobApiClient client = client();
        for (int offset = 0; ; offset += PAGE) {
            DeadLetterPage page = client.deadLetters(offset, PAGE);
            Optional<DeadLetter> found =
                    page.items().stream().filter(d -> d.id().equals(id)).findFirst();
            if (found.isPresent()) {
                JobsCommand.printJson(spec, found.get());
                return ExitCodes.OK;
            }
            if (page.items().size() < PAGE) {
                spec.commandLine().getErr().printf("jobctl: no dead letter %s%n", id);
                return ExitCodes.REFUSED;
            }
        }
    }

    /** Which messages to replay. */
    static final class Selection {
        @Option(names = "--all", required = true, description = "Every message in the queue.")
        boolean all;

        @Parameters(paramLabel = "ID", arity = "1..*")
        List<String> ids;
    }

    @Command(
            name = "replay",
            description = "Move messages back to the work queue in batches, with a progress bar. Messages whose"
                    + " attempt has nothing left to do are skipped and counted.")
    int replay(@ArgGroup(multiplicity = "1") Selection selection) {
        JobApiClient client = client();
        List<String> ids = selection.all ? everyId(client) : selection.ids;
        Progress progress = new Progress(spec.commandLine().getErr(), System.console() != null);
        int replayed = 0;
        int skipped = 0;
        progress.bar("", 0, ids.size());
        for (int done = 0; done < ids.size(); ) {
            List<String> batch = ids.subList(done, Math.min(done + REPLAY_BATCH, ids.size()));
            ReplayResult result = client.replayDeadLetters(batch);
            replayed += result.replayed();
            skipped += result.skipped();
            done += batch.size();
            progress.bar("", done, ids.size());
        }
        progress.done();
        spec.commandLine()
                .getOut()
                .printf("replayed %d, skipped %d (attempt already settled), of %d%n", replayed, skipped, ids.size());
        return ExitCodes.OK;
    }

    private static List<String> everyId(JobApiClient client) {
        List<String> ids = new ArrayList<>();
        for (int offset = 0; ; offset += PAGE) {
            List<DeadLetter> items = client.deadLetters(offset, PAGE).items();
            items.forEach(d -> ids.add(d.id()));
            if (items.size() < PAGE) {
                return ids;
            }
        }
    }

    private JobApiClient client() {
        return jobctl.client(Jobctl.OPERATOR);
    }
}
