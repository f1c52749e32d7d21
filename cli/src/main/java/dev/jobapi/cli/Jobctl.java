package dev.jobapi.cli;

import dev.jobapi.client.ApiProblem;
import dev.jobapi.client.ApiUnreachableException;
import dev.jobapi.client.AwaitTimeoutException;
import dev.jobapi.client.FileIdempotencyKeys;
import dev.jobapi.client.IdempotencyKeys;
import dev.jobapi.client.JobApiClient;
import dev.jobapi.client.model.Attempt;
import dev.jobapi.client.model.Job;
import dev.jobapi.client.model.Submitted;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

/** jobctl: the job API's command line. Each subcommand is one call (or one loop) of {@link JobApiClient}. */
@Command(
        name = "jobctl",
        mixinStandardHelpOptions = true,
        // Every command and subcommand answers --help (and --version) with exit 0.
        scope = ScopeType.INHERIT,
        version = "jobctl 0.1.0",
        description = "The job API's command line (bin/jobctl runs it).",
        subcommands = {
            TokenCommand.class,
            SubmitCommand.class,
            JobsCommand.class,
            DlqCommand.class,
            QuarantineCommand.class,
            ProvidersCommand.class,
            FallbackCommand.class,
            SpendCommand.Budgets.class,
            SpendCommand.Prices.class,
            SpendCommand.Owners.class,
            WebhooksCommand.class,
            BulkCommand.class,
            CommandLine.HelpCommand.class
        },
        footerHeading = "%nEnvironment:%n",
        footer = {
            "  JOBAPI_URL              the api (default http://127.0.0.1:8080)",
            "  JOBCTL_TOKEN            a bearer token to send instead of a minted one",
            "  JOBCTL_SUB              the subject of minted tokens (default jobctl; --as)",
            "  JOBCTL_JWT_PRIVATE_KEY  their signing key (default dev/jwt/private.pem)",
            "  JOBCTL_JWT_ISSUER       their iss (default jobapi-dev)",
            "  JOBCTL_JWT_AUDIENCE     their aud (default jobapi)",
            "  JOBCTL_STATE_DIR        where submit keeps unanswered keys",
            "                          (default ~/.local/state/jobctl)"
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:done; --wait: the job completed; providers accept: the run passed",
            "1:the api refused (its problem code and detail are printed)",
            "2:wrong command line",
            "3:no answer from the api after retries; run the same submit again to resume with its key",
            "4:--timeout ran out while the job or run was still going",
            "5:finished unsuccessfully: the job was cancelled, or the acceptance run failed"
        })
public final class Jobctl implements Runnable {

    static final List<String> USER = List.of("user");
    private static final List<String> REVIEWER = List.of("user", "reviewer");
    static final List<String> OPERATOR = List.of("operator");
    /** Minted tokens for one command: long enough for a --wait, far short of the 12 h the api allows. */
    private static final long COMMAND_TOKEN_TTL = 3_600;

    @Spec
    CommandSpec spec;

    @Option(
            names = "--url",
            scope = ScopeType.INHERIT,
            defaultValue = "${env:JOBAPI_URL:-http://127.0.0.1:8080}",
            description = "The api (default: $JOBAPI_URL or ${DEFAULT-VALUE}).")
    URI url;

    @Option(
            names = "--as",
            paramLabel = "SUBJECT",
            scope = ScopeType.INHERIT,
            defaultValue = "${env:JOBCTL_SUB:-jobctl}",
            description = "Subject of the development token minted for the call (default: $JOBCTL_SUB or"
                    + " ${DEFAULT-VALUE}); ignored when JOBCTL_TOKEN is set.")
    String subject;

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The command line with jobctl's error handling and the completion subcommand. */
    static CommandLine commandLine() {
        CommandLine commandLine = new CommandLine(new Jobctl());
        commandLine.addSubcommand("completion", new AutoComplete.GenerateCompletion());
        commandLine
                .getSubcommands()
                .get("completion")
                .getCommandSpec()
                .usageMessage()
                .description("Print the bash/zsh completion script: source <(bin/jobctl completion)");
        commandLine.setExecutionExceptionHandler(Jobctl::report);
        // Whatever writers the caller set, every command prints through TerminalText (server text is
        // relayed verbatim otherwise); the help has no colours for it to escape.
        commandLine.setColorScheme(CommandLine.Help.defaultColorScheme(CommandLine.Help.Ansi.OFF));
        commandLine.setExecutionStrategy(parsed -> {
            CommandLine root = parsed.commandSpec().root().commandLine();
            root.setOut(TerminalText.around(root.getOut()));
            root.setErr(TerminalText.around(root.getErr()));
            return new CommandLine.RunLast().execute(parsed);
        });
        return commandLine;
    }

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    @Command(
            name = "attempt",
            description = "Request another attempt of a job (POST /jobs/{id}/attempts) and print the key used.")
    int attempt(
            @Parameters(paramLabel = "JOB") UUID jobId,
            @Option(names = "--provider", description = "Default: the job's provider.") String provider) {
        return printAttempt(client(USER).requestAttempt(jobId, provider));
    }

    @Command(
            name = "supersede",
            description = "As a reviewer, supersede the job's open attempts with a reason on record and start"
                    + " another (POST /jobs/{id}/attempts with supersede).")
    int supersede(
            @Parameters(paramLabel = "JOB") UUID jobId,
            @Option(names = "--reason", required = true) String reason,
            @Option(names = "--provider", description = "Default: the job's provider.") String provider) {
        return printAttempt(client(REVIEWER).supersede(jobId, provider, reason));
    }

    @Command(name = "cancel", description = "Cancel a job (POST /jobs/{id}/cancel; cancelling twice is fine).")
    int cancel(@Parameters(paramLabel = "JOB") UUID jobId) {
        Job job = client(USER).cancel(jobId);
        out().printf("job %s %s%n", job.id(), job.state().wireName());
        return ExitCodes.OK;
    }

    private int printAttempt(Submitted<Attempt> submitted) {
        Attempt attempt = submitted.value();
        out().printf(
                        "attempt %s %s %s%s%n",
                        attempt.id(),
                        attempt.provider(),
                        attempt.state().wireName(),
                        submitted.replayed() ? " (replayed)" : "");
        out().printf("key %s%n", submitted.idempotencyKey());
        return ExitCodes.OK;
    }

    private PrintWriter out() {
        return spec.commandLine().getOut();
    }

    /** A client for one command, as the caller JOBCTL_TOKEN names, or {@code --sub} with these groups. */
    JobApiClient client(List<String> groups) {
        String given = System.getenv("JOBCTL_TOKEN");
        String token = given != null && !given.isEmpty()
                ? given
                : DevTokens.fromEnvironment().mint(subject, groups, COMMAND_TOKEN_TTL);
        if (sendsTokensInClearText(url)) {
            spec.commandLine()
                    .getErr()
                    .printf(
                            "jobctl: warning: sending a bearer token over plain http to %s, which is not this"
                                    + " machine; anyone on the way can read and reuse it (use https)%n",
                            url.getHost());
        }
        return JobApiClient.builder(url)
                .token(token)
                .idempotencyKeys(pendingKeys())
                .build();
    }

    /** Whether a token sent to {@code url} crosses a network unencrypted: http to a host not loopback. */
    static boolean sendsTokensInClearText(URI url) {
        if (!"http".equalsIgnoreCase(url.getScheme())) {
            return false;
        }
        String host = url.getHost() == null ? "" : url.getHost();
        if (host.equalsIgnoreCase("localhost")) {
            return false;
        }
        try {
            // A literal address only: a name is never looked up here, and counts as not loopback.
            return !(host.matches("[0-9.]+|\\[[0-9a-fA-F:.]+\\]")
                    && InetAddress.getByName(host).isLoopbackAddress());
        } catch (UnknownHostException e) {
            return true;
        }
    }

    /** Keys of submits that got no answer, so running the same command again resumes them. */
    private static IdempotencyKeys pendingKeys() {
        String dir = System.getenv("JOBCTL_STATE_DIR");
        if (dir == null || dir.isEmpty()) {
            String xdg = System.getenv("XDG_STATE_HOME");
            Path state = xdg == null || xdg.isEmpty()
                    ? Path.of(System.getProperty("user.home"), ".local", "state")
                    : Path.of(xdg);
            return new FileIdempotencyKeys(state.resolve("jobctl").resolve("pending-keys"));
        }
        return new FileIdempotencyKeys(Path.of(dir).resolve("pending-keys"));
    }

    private static int report(Exception e, CommandLine commandLine, CommandLine.ParseResult parsed) {
        PrintWriter err = commandLine.getErr();
        if (e instanceof ApiProblem problem) {
            err.printf(
                    "jobctl: %d %s%s%n",
                    problem.status(),
                    problem.rawCode() == null ? "" : problem.rawCode() + ": ",
                    problem.detail() != null ? problem.detail() : problem.title());
            err.printf("jobctl: request id %s%n", problem.requestId());
            return ExitCodes.REFUSED;
        }
        if (e instanceof ApiUnreachableException unreachable) {
            err.printf("jobctl: no answer: %s%n", unreachable.getMessage());
            if (unreachable.idempotencyKey() != null) {
                err.printf(
                        "jobctl: Idempotency-Key %s is kept: run the same command again to resume it%n",
                        unreachable.idempotencyKey());
            }
            return ExitCodes.UNREACHABLE;
        }
        if (e instanceof AwaitTimeoutException timeout) {
            err.printf("jobctl: gave up waiting: %s%n", timeout.getMessage());
            return ExitCodes.STILL_RUNNING;
        }
        err.printf("jobctl: %s%n", e.getMessage());
        return ExitCodes.REFUSED;
    }
}
