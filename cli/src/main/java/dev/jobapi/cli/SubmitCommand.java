package dev.jobapi.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.jobapi.client.JobApiClient;
import dev.jobapi.client.model.Job;
import dev.jobapi.client.model.NewJob;
import dev.jobapi.client.model.Submitted;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code jobctl submit}: POST /jobs under one Idempotency-Key per intention. The key is kept on disk
 * until the api answered, so the same command run again after a crash or a lost connection replays
 * the job instead of making a second one.
 */
@Command(
        name = "submit",
        description = {
            "Create a job (POST /jobs) and print its id and the Idempotency-Key used. Retries on a lost"
                    + " connection or a 5xx reuse the key; a key with no answer yet is kept in JOBCTL_STATE_DIR,"
                    + " so running the same command again resumes it. --wait then shows a progress line until the"
                    + " job is completed or cancelled."
        })
final class SubmitCommand implements Callable<Integer> {

    @ParentCommand
    Jobctl jobctl;

    @Spec
    CommandSpec spec;

    @ArgGroup(multiplicity = "1")
    Input input;

    /** The input: a prompt with its repository and base ref, or a whole JSON object. */
    static final class Input {
        @ArgGroup(exclusive = false)
        Prompt prompt;

        @Option(
                names = "--input",
                required = true,
                paramLabel = "FILE",
                description = "A file with the input JSON object ('-': standard input).")
        String file;
    }

    /** The usual input fields. */
    static final class Prompt {
        @Option(names = "--prompt", required = true)
        String prompt;

        @Option(names = "--repository")
        String repository;

        @Option(names = "--base-ref")
        String baseRef;
    }

    @Option(names = "--provider", description = "Default: the api's default provider.")
    String provider;

    @Option(names = "--fallback", split = ",", description = "Providers automatic fallback may move to, in order.")
    List<String> fallback;

    @Option(
            names = "--ttl",
            paramLabel = "SECONDS",
            description = "A deadline this many seconds after intake (1-2592000): no provider call starts"
                    + " for the job after it, and a job left with nothing open ends cancelled, expired.")
    Long ttlSeconds;

    @Option(names = "--key", description = "Use this Idempotency-Key instead of minting one.")
    String key;

    @Option(names = "--wait", description = "Follow the job until it is completed or cancelled.")
    boolean await;

    @Option(
            names = "--timeout",
            defaultValue = "600",
            description = "Seconds --wait follows the job (default ${DEFAULT-VALUE}).")
    long timeoutSeconds;

    @Override
    public Integer call() {
        NewJob job = new NewJob(inputObject(), provider, fallback, ttlSeconds);
        JobApiClient client = jobctl.client(List.of("user"));
        Submitted<Job> submitted = key == null ? client.submit(job) : client.submit(job, key);
        PrintWriter out = spec.commandLine().getOut();
        Job created = submitted.value();
        out.printf(
                "job %s %s (%s)%n",
                created.id(), created.state().wireName(), submitted.replayed() ? "replayed" : "created");
        out.printf("key %s%n", submitted.idempotencyKey());
        out.flush();
        if (!await) {
            return ExitCodes.OK;
        }
        return JobsCommand.follow(client, created.id(), Duration.ofSeconds(timeoutSeconds), spec);
    }

    private ObjectNode inputObject() {
        if (input.prompt != null) {
            NewJob prompt = NewJob.prompt(input.prompt.prompt, input.prompt.repository, input.prompt.baseRef);
            return prompt.input();
        }
        JsonNode tree;
        try (InputStream in = "-".equals(input.file) ? System.in : Files.newInputStream(Path.of(input.file))) {
            tree = JobApiClient.json().readTree(in);
        } catch (IOException e) {
            throw new ParameterException(spec.commandLine(), "--input " + input.file + ": " + e.getMessage());
        }
        if (tree == null || !tree.isObject()) {
            throw new ParameterException(spec.commandLine(), "--input must hold a JSON object");
        }
        return (ObjectNode) tree;
    }
}
