package dev.jobapi.worker.acceptance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.jobapi.worker.acceptance.AcceptanceFixtures.Check;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * The acceptance check runs a command the provider's patch may have written (a repository's own
 * tests): it runs without the worker's environment, within its time and with its output bounded, and
 * nothing it started outlives it.
 */
class PatchTrialTest {

    private static final Map<String, String> REPOSITORY = Map.of("greeting.txt", "hello\n");

    private static final byte[] PATCH = ("diff --git a/greeting.txt b/greeting.txt\n"
                    + "--- a/greeting.txt\n+++ b/greeting.txt\n@@ -1 +1 @@\n-hello\n+hello, world\n")
            .getBytes(StandardCharsets.UTF_8);

    private static Optional<String> run(String command, Duration timeout) {
        return PatchTrial.judge(REPOSITORY, PATCH, new Check(null, null, null, command), timeout);
    }

    @Test
    void aCheckCommandSeesNoneOfTheWorkersEnvironmentOnlyAMinimalPathAndAHomeOfItsOwn() {
        // Every variable of this JVM (the worker's stand-in: database URL, passwords, keys when set)
        // must be unset for the command, except the few it is given fresh values of.
        var given = java.util.Set.of("PATH", "HOME", "TMPDIR", "LANG", "PWD", "SHLVL", "_", "OLDPWD");
        var inherited = System.getenv().keySet().stream()
                .filter(name -> name.matches("[A-Za-z_][A-Za-z0-9_]*") && !given.contains(name))
                .toList();
        assertThat(inherited).as("this JVM has environment variables to leak").isNotEmpty();
        String noneOfThem =
                inherited.stream().map(name -> "[ -z \"${" + name + "+set}\" ]").collect(Collectors.joining(" && "));
        String home = System.getProperty("user.home");
        String command = noneOfThem + " && [ \"$PATH\" = '" + PatchTrial.PATH + "' ] && [ \"$HOME\" != '" + home
                + "' ] && [ -d \"$HOME\" ] && [ -z \"$(ls -A \"$HOME\")\" ] && grep -q 'hello, world' greeting.txt";

        assertThat(run(command, Duration.ofSeconds(20))).isEmpty();
    }

    @Test
    void aCheckCommandPastItsTimeIsKilledWithEverythingItStarted() {
        // Unique arguments, so the processes are recognisable among the machine's.
        Optional<String> reason = run("sleep 61.4242 & sleep 61.4343; echo done", Duration.ofSeconds(1));

        assertThat(reason).hasValueSatisfying(r -> assertThat(r).contains("ran past PT1S"));
        Awaitility.await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(ProcessHandle.allProcesses()
                        .filter(p -> p.info()
                                .arguments()
                                .map(a -> String.join(" ", a).contains("61.4"))
                                .orElse(false))
                        .toList())
                .as("a process the check started is still running")
                .isEmpty());
    }

    @Test
    void aCheckCommandThatWritesWithoutEndIsStoppedAtTheOutputBoundNotAtTheTimeout() {
        long started = System.nanoTime();
        Optional<String> reason = run("yes 'output without end'", Duration.ofSeconds(60));

        assertThat(reason).hasValueSatisfying(r -> assertThat(r).contains("wrote more than 1048576 bytes"));
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(30));
    }

    @Test
    void aFailedCheckSaysHowItsOutputEndedInPrintableText() {
        Optional<String> reason = run("printf 'assert \\033[31mfailed\\n'; exit 3", Duration.ofSeconds(20));

        assertThat(reason).hasValueSatisfying(r -> assertThat(r)
                .startsWith("check command exited 3: ")
                .endsWith("; output ends: assert ?[31mfailed"));
    }

    @Test
    void aPatchThatCommitsASymlinkFailsTheTrialWithTheRuleItBreaks() {
        byte[] symlink = ("diff --git a/passwd b/passwd\nnew file mode 120000\n--- /dev/null\n+++ b/passwd\n"
                        + "@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n")
                .getBytes(StandardCharsets.UTF_8);

        assertThat(PatchTrial.judge(REPOSITORY, symlink, new Check(null, null, null, "true"), Duration.ofSeconds(20)))
                .hasValueSatisfying(reason -> assertThat(reason).contains("passwd mode 120000"));
    }
}
