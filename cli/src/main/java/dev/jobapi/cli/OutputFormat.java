package dev.jobapi.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.jobapi.client.JobApiClient;
import java.io.UncheckedIOException;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

/** {@code -o json} on every listing: the api's answer as one JSON document, for scripts. */
final class OutputFormat {

    /** The formats there are; picocli refuses any other as a usage error (exit 2). */
    enum Format {
        json
    }

    @Option(
            names = {"-o", "--output"},
            paramLabel = "FORMAT",
            description = "json: print the api's answer as one JSON document.")
    Format format;

    @Option(names = "--json", description = "Same as -o json.")
    boolean json;

    /** Whether the caller asked for JSON. */
    boolean json() {
        return json || format == Format.json;
    }

    /**
     * Prints the api's answer as one JSON document when the caller asked for JSON, else runs {@code
     * asText}; returns the exit code of a command that got its answer.
     */
    int print(CommandSpec spec, Object answer, Runnable asText) {
        if (json()) {
            printJson(spec, answer);
        } else {
            asText.run();
        }
        return ExitCodes.OK;
    }

    /** Prints {@code value} as one pretty-printed JSON document on the command's standard output. */
    static void printJson(CommandSpec spec, Object value) {
        try {
            spec.commandLine()
                    .getOut()
                    .println(
                            JobApiClient.json().writerWithDefaultPrettyPrinter().writeValueAsString(value));
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }
}
