package dev.jobapi.common.state;

import static org.assertj.core.api.Assertions.assertThat;

import dev.jobapi.common.acceptance.AcceptanceState;
import dev.jobapi.common.attempt.AttemptState;
import dev.jobapi.common.job.JobState;
import dev.jobapi.common.provider.ProviderHealth;
import dev.jobapi.common.webhook.WebhookDeliveryState;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The SQL in every module's production code names states only as the state machines do (issue 35):
 * a state set is an array parameter derived from an enum ({@code state = ANY(?)}, e.g. {@link
 * JobState#wireNames}), and a single state written in a statement is a wire name of a state enum,
 * so a misspelt or removed state cannot hide in a query that then silently matches nothing. The one
 * set written out is a partial unique index's predicate in {@code ON CONFLICT}, which PostgreSQL
 * must match against the index and so cannot take a parameter.
 */
class SqlStateLiteralsTest {

    /** {@code state = 'x'}, {@code a.state <> 'x'}, {@code SET state = 'x'}. */
    private static final Pattern ONE_STATE = Pattern.compile("\\bstate\\s*(?:=|<>|!=)\\s*'([^']*)'");

    /** {@code state IN ('x', 'y')}, {@code state NOT IN (...)}: a set written out. */
    private static final Pattern STATE_SET = Pattern.compile("\\bstate\\s+(?:NOT\\s+)?IN\\s*\\(\\s*'([^)]*)\\)");

    private static final Set<String> WIRE_NAMES = Stream.of(
                    Arrays.stream(JobState.values()).map(JobState::wireName),
                    Arrays.stream(AttemptState.values()).map(AttemptState::wireName),
                    Arrays.stream(AcceptanceState.values()).map(AcceptanceState::wireName),
                    Arrays.stream(ProviderHealth.BreakerState.values()).map(ProviderHealth.BreakerState::wireName),
                    Arrays.stream(WebhookDeliveryState.values()).map(WebhookDeliveryState::wireName))
            .flatMap(names -> names)
            .collect(Collectors.toSet());

    @Test
    void everyStateNamedInProductionSqlIsAnEnumsWireNameAndNoStateSetIsWrittenOut() throws IOException {
        List<Path> sources = productionSources();
        assertThat(sources)
                .as("production sources found from %s", repositoryRoot())
                .hasSizeGreaterThan(100);
        List<String> found = new ArrayList<>();
        for (Path source : sources) {
            found.addAll(violations(source.toString(), Files.readString(source)));
        }
        assertThat(found).isEmpty();
    }

    @Test
    void aMisspeltStateAndAWrittenOutSetAreBothFound() {
        String code = "\"SELECT id FROM job WHERE state = 'needs-review'\"\n"
                + "\"UPDATE attempt SET state = 'unknown' WHERE state IN ('starting', 'unknown')\"\n"
                + "\"INSERT INTO provider_acceptance ... ON CONFLICT (provider) WHERE state IN ('requested', 'running')\"";

        assertThat(violations("Example.java", code))
                .containsExactly(
                        "Example.java:1: state 'needs-review' is no state enum's wire name",
                        "Example.java:2: state set ('starting', 'unknown') written out; pass it as an array"
                                + " parameter derived from the enum");
    }

    static List<String> violations(String file, String code) {
        List<String> found = new ArrayList<>();
        Matcher one = ONE_STATE.matcher(code);
        while (one.find()) {
            if (!WIRE_NAMES.contains(one.group(1))) {
                found.add(file + ":" + line(code, one.start()) + ": state '" + one.group(1)
                        + "' is no state enum's wire name");
            }
        }
        Matcher set = STATE_SET.matcher(code);
        while (set.find()) {
            String before = code.substring(Math.max(0, set.start() - 200), set.start());
            if (!before.contains("ON CONFLICT")) {
                found.add(file + ":" + line(code, set.start()) + ": state set ('" + set.group(1)
                        + ") written out; pass it as an array parameter derived from the enum");
            }
        }
        return found;
    }

    private static int line(String code, int offset) {
        return (int) code.substring(0, offset).chars().filter(c -> c == '\n').count() + 1;
    }

    private static List<Path> productionSources() throws IOException {
        try (Stream<Path> files = Files.walk(repositoryRoot())) {
            return files.filter(path -> path.toString().endsWith(".java"))
                    .filter(path -> path.toString().contains("/src/main/java/"))
                    .filter(path -> !path.toString().contains("/target/"))
                    .toList();
        }
    }

    /** The repository, seen from this module's directory (Maven runs tests there). */
    private static Path repositoryRoot() {
        return Path.of("").toAbsolutePath().getParent();
    }
}
