package dev.jobapi.cli;

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
            JobsCommand.printJson(spec, answer);
        } else {
            asText.run();
        }
        return ExitCodes.OK;
    }
}
