package dev.jobapi.cli;

import dev.jobapi.client.model.Budget;
import dev.jobapi.client.model.OwnerBudgets;
import dev.jobapi.client.model.OwnerShare;
import dev.jobapi.client.model.Price;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code jobctl budgets}, {@code jobctl prices} and {@code jobctl owners}: money budgets per owner, the
 * price table and owners' shares of the workers (operators).
 */
final class SpendCommand {

    private SpendCommand() {}

    @Command(
            name = "budgets",
            description = "Owners' money budgets, reserved before each call (operators; docs/design.md, rule 20).")
    static final class Budgets {

        private static final String PROVIDER = "The one provider whose calls it holds; absent: every provider.";

        @ParentCommand
        Jobctl jobctl;

        @Spec
        CommandSpec spec;

        @Command(name = "show", description = "OWNER's budgets: limit, spent, reserved by calls under way, left.")
        int show(@Parameters(paramLabel = "OWNER") String owner, @Mixin OutputFormat output) {
            OwnerBudgets budgets = jobctl.client(Jobctl.OPERATOR).budgets(owner);
            return output.print(spec, budgets, () -> {
                PrintWriter out = spec.commandLine().getOut();
                if (budgets.budgets().isEmpty()) {
                    out.printf("%s has no money budget%n", owner);
                }
                budgets.budgets().forEach(budget -> print(out, owner, budget));
            });
        }

        @Command(
                name = "set",
                description = "Set OWNER's budget for PERIOD (day or month, UTC), of every provider or of one, from"
                        + " the next call on. Audited.")
        int set(
                @Parameters(paramLabel = "OWNER") String owner,
                @Parameters(paramLabel = "PERIOD", description = "day or month") String period,
                @Option(names = "--provider", description = PROVIDER) String provider,
                @Option(names = "--limit-usd", required = true, description = "US dollars per period.")
                        BigDecimal limitUsd,
                @Option(names = "--soft-percent", description = "Past this share a call records an event (80).")
                        Integer softPercent,
                @Option(names = "--reason", required = true, description = "Why (audited).") String reason,
                @Mixin OutputFormat output) {
            Budget budget =
                    jobctl.client(Jobctl.OPERATOR).setBudget(owner, period, provider, limitUsd, softPercent, reason);
            return output.print(spec, budget, () -> print(spec.commandLine().getOut(), owner, budget));
        }

        @Command(
                name = "remove",
                description = "Remove OWNER's budget for PERIOD, of every provider (the default, if any, applies"
                        + " again) or of one. Audited.")
        int remove(
                @Parameters(paramLabel = "OWNER") String owner,
                @Parameters(paramLabel = "PERIOD", description = "day or month") String period,
                @Option(names = "--provider", description = PROVIDER) String provider,
                @Option(names = "--reason", required = true, description = "Why (audited).") String reason) {
            jobctl.client(Jobctl.OPERATOR).removeBudget(owner, period, provider, reason);
            spec.commandLine()
                    .getOut()
                    .printf("%s's %s budget%s removed%n", owner, period, provider == null ? "" : " for " + provider);
            return ExitCodes.OK;
        }

        private static void print(PrintWriter out, String owner, Budget budget) {
            out.printf(
                    "%s %s%s from %s: limit %s USD, spent %s, reserved %s, left %s%s%s%n",
                    owner,
                    budget.period(),
                    budget.provider() == null ? "" : " for " + budget.provider(),
                    budget.periodStartsOn(),
                    budget.limitUsd().toPlainString(),
                    budget.spentUsd().toPlainString(),
                    budget.reservedUsd().toPlainString(),
                    budget.remainingUsd().toPlainString(),
                    budget.defaultBudget() ? " (the default)" : "",
                    budget.pastSoftThreshold() ? "  PAST " + budget.softPercent() + "%" : "");
        }
    }

    @Command(name = "prices", description = "The price table, per provider and model (operators).")
    static final class Prices {

        @ParentCommand
        Jobctl jobctl;

        @Spec
        CommandSpec spec;

        @Command(name = "list", description = "The price in force for each provider and model.")
        int list(@Mixin OutputFormat output) {
            List<Price> prices = jobctl.client(Jobctl.OPERATOR).prices();
            return output.print(
                    spec,
                    prices,
                    () -> prices.forEach(price -> print(spec.commandLine().getOut(), price)));
        }

        @Command(
                name = "set",
                description =
                        "A new price for PROVIDER's model from now on; calls claimed before keep theirs." + " Audited.")
        int set(
                @Parameters(paramLabel = "PROVIDER") String provider,
                @Option(names = "--model", required = true, description = "The model the provider is configured with.")
                        String model,
                @Option(names = "--input-usd", required = true, description = "US dollars per million prompt tokens.")
                        BigDecimal input,
                @Option(
                                names = "--output-usd",
                                required = true,
                                description = "US dollars per million completion tokens.")
                        BigDecimal outputUsd,
                @Option(names = "--reason", required = true, description = "Why (audited).") String reason,
                @Mixin OutputFormat output) {
            Price price = jobctl.client(Jobctl.OPERATOR).setPrice(provider, model, input, outputUsd, reason);
            return output.print(spec, price, () -> print(spec.commandLine().getOut(), price));
        }

        private static void print(PrintWriter out, Price price) {
            out.printf(
                    "%s %s: %s USD in, %s USD out per million tokens, from %s (%s: %s)%n",
                    price.provider(),
                    price.model(),
                    price.inputUsdPerMillionTokens().toPlainString(),
                    price.outputUsdPerMillionTokens().toPlainString(),
                    price.effectiveFrom(),
                    price.setBy(),
                    price.reason());
        }
    }

    @Command(
            name = "owners",
            description = "Owners' shares of the workers: the weight of their turns and their cap on calls in flight"
                    + " (operators; docs/design.md, \"Fair share\").")
    static final class Owners {

        @ParentCommand
        Jobctl jobctl;

        @Spec
        CommandSpec spec;

        @Command(name = "show", description = "OWNER's weight and cap on calls in flight.")
        int show(@Parameters(paramLabel = "OWNER") String owner, @Mixin OutputFormat output) {
            OwnerShare share = jobctl.client(Jobctl.OPERATOR).ownerShare(owner);
            return output.print(spec, share, () -> print(spec.commandLine().getOut(), share));
        }

        @Command(
                name = "set",
                description = "Set OWNER's weight and cap from the next relay round and claim on. Audited.")
        int set(
                @Parameters(paramLabel = "OWNER") String owner,
                @Option(names = "--weight", required = true, description = "Jobs per relay turn, 1-100.") int weight,
                @Option(names = "--max-in-flight", description = "Calls in flight at once; absent: the default.")
                        Integer maxInFlight,
                @Option(names = "--reason", required = true, description = "Why (audited).") String reason,
                @Mixin OutputFormat output) {
            OwnerShare share = jobctl.client(Jobctl.OPERATOR).setOwnerShare(owner, weight, maxInFlight, reason);
            return output.print(spec, share, () -> print(spec.commandLine().getOut(), share));
        }

        private static void print(PrintWriter out, OwnerShare share) {
            out.printf(
                    "%s: weight %d, calls in flight %s%s%n",
                    share.owner(),
                    share.weight(),
                    share.maxInFlight() == null ? "the default" : "at most " + share.maxInFlight(),
                    share.setBy() == null ? "" : " (" + share.setBy() + ": " + share.reason() + ")");
        }
    }
}
