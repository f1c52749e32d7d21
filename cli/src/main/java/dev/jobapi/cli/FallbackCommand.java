package dev.jobapi.cli;

import dev.jobapi.client.model.KillSwitch;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code jobctl fallback}: the kill switch for new fallback attempts. */
@Command(
        name = "fallback",
        description = "Show the kill switch for new fallback attempts (operators); 'on' and 'off' flip it.")
final class FallbackCommand implements Callable<Integer> {

    @ParentCommand
    Jobctl jobctl;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        return print(jobctl.client(Jobctl.OPERATOR).fallback());
    }

    @Command(name = "on", description = "Allow new fallback attempts again.")
    int on(@Option(names = "--reason", description = "Kept in the audit trail.") String reason) {
        return print(jobctl.client(Jobctl.OPERATOR).setFallback(true, reason));
    }

    @Command(name = "off", description = "Refuse new fallback attempts (409 fallback-disabled); deletes nothing.")
    int off(@Option(names = "--reason", required = true, description = "Kept in the audit trail.") String reason) {
        return print(jobctl.client(Jobctl.OPERATOR).setFallback(false, reason));
    }

    private int print(KillSwitch state) {
        spec.commandLine()
                .getOut()
                .printf(
                        "fallback %s  set by %s at %s%s%n",
                        state.enabled() ? "on" : "off",
                        state.setBy() == null ? "-" : state.setBy(),
                        state.setAt() == null ? "-" : state.setAt(),
                        state.reason() == null ? "" : ": " + state.reason());
        return ExitCodes.OK;
    }
}
