package dev.jobapi.worker;

import dev.jobapi.fakeprovider.DemoRepository;
import dev.jobapi.fakeprovider.FakeProvider;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.eclipse.jgit.api.Git;
import org.eclipse.jgit.api.errors.GitAPIException;

/**
 * Starts the fake provider in-process on a free port and seeds a demo git repository in a temp
 * folder; points the worker at both.
 */
public class FakeProviderResource implements QuarkusTestResourceLifecycleManager {

    static FakeProvider fake;
    static Path repository;

    @Override
    public Map<String, String> start() {
        fake = FakeProvider.start(0);
        try {
            repository = Files.createTempDirectory("jobapi-demo-repo");
            DemoRepository.writeTo(repository);
            try (Git git = Git.init()
                    .setDirectory(repository.toFile())
                    .setInitialBranch("main")
                    .call()) {
                git.add().addFilepattern(".").call();
                git.commit()
                        .setMessage("demo: initial")
                        .setAuthor("test", "test@jobapi.invalid")
                        .setCommitter("test", "test@jobapi.invalid")
                        .call();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GitAPIException e) {
            throw new IllegalStateException(e);
        }
        return Map.of(
                "jobapi.provider.fake-a.base-url", fake.baseUrl(),
                "jobapi.provider.fake-b.base-url", fake.baseUrl(),
                "jobapi.provider.fake-anthropic.base-url", fake.baseUrl(),
                "jobapi.provider.fake-c.base-url", fake.baseUrl(),
                "jobapi.provider.fake-a2.base-url", fake.baseUrl(),
                "jobapi.provider.fake-capped.base-url", fake.baseUrl(),
                "jobapi.provider.fake-rated.base-url", fake.baseUrl(),
                "jobapi.provider.fake-metered.base-url", fake.baseUrl(),
                "jobapi.provider.fake-tallied.base-url", fake.baseUrl(),
                "jobapi.apply.git.repository", repository.toString());
    }

    @Override
    public void stop() {
        if (fake != null) {
            fake.stop();
        }
    }
}
