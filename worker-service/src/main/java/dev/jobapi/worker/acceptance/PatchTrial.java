package dev.jobapi.worker.acceptance;

import dev.jobapi.worker.acceptance.AcceptanceFixtures.Check;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.eclipse.jgit.api.Git;
import org.eclipse.jgit.api.errors.GitAPIException;
import org.eclipse.jgit.patch.Patch;
import org.eclipse.jgit.patch.PatchApplier;

/**
 * Tries one patch on a fresh copy of the fixture repository and judges the result. Nothing here
 * touches a real target: the copy lives in a temporary directory that is deleted afterwards.
 */
final class PatchTrial {

    private PatchTrial() {}

    /** Why the patch does not pass, or empty when it applies cleanly and passes the check. */
    static Optional<String> judge(Map<String, String> repository, byte[] patch, Check check, Duration commandTimeout) {
        Path dir = null;
        try {
            dir = Files.createTempDirectory("jobapi-acceptance-");
            for (var file : repository.entrySet()) {
                Path path = dir.resolve(file.getKey());
                Files.createDirectories(path.getParent());
                Files.writeString(path, file.getValue());
            }
            try (Git git = Git.init()
                    .setDirectory(dir.toFile())
                    .setInitialBranch("main")
                    .call()) {
                git.add().addFilepattern(".").call();
                Patch parsed = new Patch();
                parsed.parse(new ByteArrayInputStream(patch));
                if (!parsed.getErrors().isEmpty()) {
                    return Optional.of("not a unified diff: " + parsed.getErrors());
                }
                PatchApplier.Result result = new PatchApplier(git.getRepository()).applyPatch(parsed);
                if (!result.getErrors().isEmpty()) {
                    return Optional.of("patch does not apply: " + result.getErrors());
                }
            }
            return check(dir, check, commandTimeout);
        } catch (IOException | GitAPIException e) {
            return Optional.of("patch could not be tried: " + e);
        } finally {
            delete(dir);
        }
    }

    private static Optional<String> check(Path dir, Check check, Duration commandTimeout) throws IOException {
        if (check.command() != null) {
            return command(dir, check.command(), commandTimeout);
        }
        Path file = dir.resolve(check.file());
        if (!Files.isRegularFile(file)) {
            return Optional.of(check.file() + " does not exist after the patch");
        }
        String content = Files.readString(file, StandardCharsets.UTF_8);
        if (check.equals() != null && !content.equals(check.equals())) {
            return Optional.of(check.file() + " is not the expected content");
        }
        if (check.contains() != null && !content.contains(check.contains())) {
            return Optional.of(
                    check.file() + " does not contain " + check.contains().strip());
        }
        return Optional.empty();
    }

    private static Optional<String> command(Path dir, String command, Duration timeout) throws IOException {
        Process process = new ProcessBuilder("sh", "-c", command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                return Optional.of("check command ran past " + timeout);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            return Optional.of("interrupted while the check command ran");
        }
        return process.exitValue() == 0
                ? Optional.empty()
                : Optional.of("check command exited " + process.exitValue() + ": " + command);
    }

    private static void delete(Path dir) {
        if (dir == null) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder())
                    .forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot delete " + dir, e);
        }
    }
}
