package dev.jobapi.cli;

import dev.jobapi.client.model.Attempt;
import java.io.PrintWriter;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code jobctl quarantine}: attempts held because the provider reported no usage, and their release. */
@Command(
        name = "quarantine",
        description = "List the attempts held for unknown usage (operators); 'resolve' releases or fails one.")
final class QuarantineCommand implements Callable<Integer> {

    @ParentCommand
    Jobctl jobctl;

    @Spec
    CommandSpec spec;

    @Mixin
    OutputFormat output;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        List<Attempt> held = jobctl.client(Jobctl.OPERATOR).quarantine();
        return output.print(spec, held, () -> {
            for (Attempt attempt : held) {
                out.printf(
                        "%s  job=%s  %s  %s  since=%s%n",
                        attempt.id(),
                        attempt.jobId(),
                        attempt.provider(),
                        attempt.state().wireName(),
                        attempt.updatedAt());
            }
        });
    }

    /** Reconciled usage, or failing the attempt. */
    static final class Outcome {
        @Option(
                names = "--usage",
                required = true,
                split = ",",
                paramLabel = "PROMPT,COMPLETION",
                description = "Token counts from the provider's own records; the attempt then goes to the election.")
        int[] usage;

        @Option(names = "--fail", required = true, description = "Fail the attempt instead.")
        boolean fail;
    }

    @Command(name = "resolve", description = "Release a held attempt with reconciled usage, or fail it.")
    int resolve(
            @Parameters(paramLabel = "ATTEMPT") UUID attemptId,
            @ArgGroup(multiplicity = "1") Outcome outcome,
            @Option(names = "--reason", required = true, description = "Kept in the audit trail.") String reason) {
        if (outcome.usage != null && outcome.usage.length != 2) {
            throw new ParameterException(spec.commandLine(), "--usage takes two counts: PROMPT,COMPLETION");
        }
        Attempt attempt = outcome.fail
                ? jobctl.client(Jobctl.OPERATOR).resolveAsFailed(attemptId, reason)
                : jobctl.client(Jobctl.OPERATOR)
                        .resolveWithUsage(attemptId, outcome.usage[0], outcome.usage[1], reason);
        spec.commandLine()
                .getOut()
                .printf("attempt %s %s%n", attempt.id(), attempt.state().wireName());
        return ExitCodes.OK;
    }
}
