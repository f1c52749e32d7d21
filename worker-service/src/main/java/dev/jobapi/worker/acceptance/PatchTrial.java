package dev.jobapi.worker.acceptance;

import dev.jobapi.worker.acceptance.AcceptanceFixtures.Check;
import dev.jobapi.worker.apply.ApplyRefused;
import dev.jobapi.worker.apply.PatchRules;
import java.io.File;
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

    /** The check command's PATH: the system's own directories, nothing of the worker's. */
    static final String PATH = "/usr/local/bin:/usr/bin:/bin";

    /** Output past this kills the check command: a repository's tests print far less. */
    static final long MAX_OUTPUT_BYTES = 1024 * 1024;

    /** How much of the output's end a failed check's reason quotes. */
    static final int OUTPUT_TAIL_BYTES = 400;

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
                // The rules every apply holds an answer to: no symlink, submodule or .git/ path in the copy.
                Patch parsed = PatchRules.parse(patch);
                PatchApplier.Result result = new PatchApplier(git.getRepository()).applyPatch(parsed);
                if (!result.getErrors().isEmpty()) {
                    return Optional.of("patch does not apply: " + result.getErrors());
                }
            }
            return check(dir, check, commandTimeout);
        } catch (ApplyRefused refused) {
            return Optional.of(refused.getMessage());
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

    /**
     * Runs the check command as a stranger to the worker: in the patched copy, with an environment of
     * its own (a minimal PATH, an empty HOME of its own, nothing of the worker's: no provider keys, no
     * database or broker password), stdin empty, its output read and kept only as a short tail, and
     * killed with everything it started once it runs past {@code timeout} or writes more than {@link
     * #MAX_OUTPUT_BYTES}. What it can still do (its user's files and network) is the residual risk
     * docs/design.md and the README's security model name.
     */
    private static Optional<String> command(Path dir, String command, Duration timeout) throws IOException {
        Path home = Files.createTempDirectory("jobapi-acceptance-home-");
        try {
            ProcessBuilder builder = new ProcessBuilder("sh", "-c", command)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
            Map<String, String> environment = builder.environment();
            environment.clear();
            environment.put("PATH", PATH);
            environment.put("HOME", home.toString());
            environment.put("TMPDIR", home.toString());
            environment.put("LANG", "C.UTF-8");
            Process process = builder.start();
            Output output = new Output(process);
            Thread reader = new Thread(output, "acceptance-check-output");
            reader.setDaemon(true);
            reader.start();
            long deadline = System.nanoTime() + timeout.toNanos();
            try {
                while (!process.waitFor(50, TimeUnit.MILLISECONDS)) {
                    if (output.overflowed()) {
                        killWithDescendants(process);
                        return Optional.of("check command wrote more than " + MAX_OUTPUT_BYTES + " bytes");
                    }
                    if (System.nanoTime() - deadline > 0) {
                        killWithDescendants(process);
                        return Optional.of("check command ran past " + timeout);
                    }
                }
            } catch (InterruptedException e) {
                killWithDescendants(process);
                Thread.currentThread().interrupt();
                return Optional.of("interrupted while the check command ran");
            }
            reader.join(TimeUnit.SECONDS.toMillis(1));
            if (output.overflowed()) {
                return Optional.of("check command wrote more than " + MAX_OUTPUT_BYTES + " bytes");
            }
            return process.exitValue() == 0
                    ? Optional.empty()
                    : Optional.of("check command exited " + process.exitValue() + ": " + command
                            + output.tail()
                                    .map(tail -> "; output ends: " + tail)
                                    .orElse(""));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.of("interrupted while the check command ran");
        } finally {
            delete(home);
        }
    }

    /** The command's processes first (a shell's children outlive it otherwise), then the shell. */
    private static void killWithDescendants(Process process) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
    }

    /** Reads a command's output to its end, counting it and keeping only its last bytes. */
    private static final class Output implements Runnable {
        private final Process process;
        private final byte[] tail = new byte[OUTPUT_TAIL_BYTES];
        private volatile long total;

        Output(Process process) {
            this.process = process;
        }

        @Override
        public void run() {
            byte[] buffer = new byte[8192];
            try (var in = process.getInputStream()) {
                int read;
                while ((read = in.read(buffer)) >= 0) {
                    synchronized (tail) {
                        int keep = Math.min(read, tail.length);
                        int shift = Math.min(tail.length - keep, (int) Math.min(total, tail.length));
                        System.arraycopy(tail, tail.length - shift, tail, tail.length - shift - keep, shift);
                        System.arraycopy(buffer, read - keep, tail, tail.length - keep, keep);
                        total += read;
                    }
                    if (total > MAX_OUTPUT_BYTES) {
                        return; // the waiting thread kills the command
                    }
                }
            } catch (IOException closed) {
                // The command was killed under the read: nothing more to keep.
            }
        }

        boolean overflowed() {
            return total > MAX_OUTPUT_BYTES;
        }

        /** The last bytes written, printable ASCII only, or empty when there were none. */
        Optional<String> tail() {
            synchronized (tail) {
                int kept = (int) Math.min(total, tail.length);
                if (kept == 0) {
                    return Optional.empty();
                }
                String text = new String(tail, tail.length - kept, kept, StandardCharsets.UTF_8)
                        .strip()
                        .replaceAll("[^\\x20-\\x7e]", "?");
                return text.isEmpty() ? Optional.empty() : Optional.of(text);
            }
        }
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
