package dev.jobapi.worker.acceptance;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jobapi.common.acceptance.AcceptanceConfig;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The acceptance fixtures: a small repository (path to content) and tasks against it, each with a
 * check its resulting patch must pass. Built in from {@code acceptance/fixtures.json}, or an
 * operator's own file named by {@code jobapi.acceptance.fixtures}.
 */
@ApplicationScoped
public class AcceptanceFixtures {

    /** One task: what the provider is asked, and how its patch is judged once applied. */
    public record Task(String name, String prompt, Check check) {}

    /**
     * A patch passes when it applies cleanly and then: {@code file} equals {@code equals}, or
     * contains {@code contains}; or {@code command} exits 0 in the patched repository.
     */
    public record Check(String file, String contains, String equals, String command) {}

    /** The whole fixture set. */
    public record Fixtures(Map<String, String> repository, List<Task> tasks) {}

    private final Fixtures fixtures;

    AcceptanceFixtures(AcceptanceConfig config, ObjectMapper mapper) {
        this.fixtures = load(config, mapper);
    }

    public Fixtures get() {
        return fixtures;
    }

    private static Fixtures load(AcceptanceConfig config, ObjectMapper mapper) {
        try (InputStream in = config.fixtures().isPresent()
                ? Files.newInputStream(Path.of(config.fixtures().get()))
                : AcceptanceFixtures.class.getResourceAsStream("/acceptance/fixtures.json")) {
            Fixtures read = mapper.readValue(in, Fixtures.class);
            if (read.tasks() == null || read.tasks().isEmpty() || read.repository() == null) {
                throw new IllegalStateException("Acceptance fixtures need a repository and at least one task");
            }
            for (Task task : read.tasks()) {
                Check check = task.check();
                boolean fileCheck =
                        check != null && check.file() != null && (check.contains() != null) != (check.equals() != null);
                boolean commandCheck = check != null && check.command() != null && check.file() == null;
                if (task.name() == null || task.prompt() == null || fileCheck == commandCheck) {
                    throw new IllegalStateException("Acceptance task " + task.name()
                            + " needs a name, a prompt and one check: file with contains or equals, or command");
                }
            }
            return new Fixtures(new TreeMap<>(read.repository()), List.copyOf(read.tasks()));
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read the acceptance fixtures", e);
        }
    }
}
