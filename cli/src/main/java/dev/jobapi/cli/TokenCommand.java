package dev.jobapi.cli;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code jobctl token}: prints a development token the locally run services accept. */
@Command(
        name = "token",
        description = {
            "Print a development RS256 JWT signed with dev/jwt/private.pem, accepted by locally run services"
                    + " (bin/dev up). Claims: iss=jobapi-dev, aud=jobapi, sub, upn=sub, groups as an array"
                    + " (roles are user, reviewer, operator), iat, exp, jti.",
            "Example: curl -H \"Authorization: Bearer $(bin/jobctl token --sub alice)\" ..."
        })
final class TokenCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--sub", required = true, description = "The subject: the owner of the jobs it creates.")
    String subject;

    @Option(
            names = "--groups",
            defaultValue = "user",
            description = "Comma-separated roles (default ${DEFAULT-VALUE}).")
    String groups;

    @Option(
            names = "--ttl",
            defaultValue = "43200",
            description = "Lifetime in seconds, 1-43200 (default and longest ${DEFAULT-VALUE} = 12 h: the api"
                    + " refuses longer-lived tokens).")
    long ttlSeconds;

    @Override
    public Integer call() {
        if (subject.isEmpty()) {
            throw new ParameterException(spec.commandLine(), "--sub must not be empty");
        }
        if ((subject + groups).chars().anyMatch(Character::isISOControl)) {
            throw new ParameterException(spec.commandLine(), "control characters are not allowed");
        }
        if (ttlSeconds < 1 || ttlSeconds > DevTokens.MAX_TTL_SECONDS) {
            throw new ParameterException(
                    spec.commandLine(),
                    "--ttl must be 1-" + DevTokens.MAX_TTL_SECONDS + " seconds (the api refuses longer-lived tokens)");
        }
        spec.commandLine().getOut().println(DevTokens.fromEnvironment().mint(subject, roles(groups), ttlSeconds));
        return ExitCodes.OK;
    }

    /** "a,b, c" -> [a, b, c]; blanks are dropped. */
    static List<String> roles(String csv) {
        return Arrays.stream(csv.split(","))
                .map(String::strip)
                .filter(g -> !g.isEmpty())
                .toList();
    }
}
