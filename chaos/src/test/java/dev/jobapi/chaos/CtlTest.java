package dev.jobapi.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The seam to chaos/run over a stand-in script that answers as chaos/run's {@code ctl} does and notes each
 * call: the driver sends each action with its arguments and reads each answer into a type.
 */
class CtlTest {

    @TempDir
    Path dir;

    private Path calls;
    private Ctl ctl;

    @BeforeEach
    void standInScript() throws Exception {
        calls = dir.resolve("calls");
        Path script = dir.resolve("run");
        Files.writeString(
                script,
                String.join(
                        "\n",
                        "#!/usr/bin/env bash",
                        "echo \"$*\" >>'" + calls + "'",
                        "[[ $1 == ctl ]] || exit 2",
                        "case \"$2 $3\" in",
                        "  'term api-1') echo 'exited 3' ;;",
                        "  'term worker-2') echo 'killed 30' ;;",
                        "  'term worker-3') echo not-running ;;",
                        "  'pg-terminate ') echo 'WARNING:  PID 42 is not a PostgreSQL backend process' >&2; echo 14 ;;",
                        "  'queues ') printf 'jobs.attempts 12\\njobs.attempts.dlq 3\\n' ;;",
                        "  'mq-restart ') echo 'rabbitmqctl: node down' >&2; exit 1 ;;",
                        "esac",
                        ""));
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
        ctl = new Ctl(script.toString());
    }

    @Test
    void readsHowEachRolloutStopEnded() {
        assertThat(ctl.term("api-1", 30)).isEqualTo(new Ctl.Stop(Ctl.StopOutcome.EXITED, 3));
        assertThat(ctl.term("worker-2", 30)).isEqualTo(new Ctl.Stop(Ctl.StopOutcome.KILLED, 30));
        assertThat(ctl.term("worker-3", 30)).isEqualTo(new Ctl.Stop(Ctl.StopOutcome.NOT_RUNNING, 0));
    }

    @Test
    void anAnswerOutsideTheProtocolFailsWithTheAnswer() {
        assertThatThrownBy(() -> ctl.term("fake", 30)).hasMessageContaining("answered ''");
        assertThatThrownBy(() -> Ctl.Stop.parse("stopped 3")).hasMessageContaining("'stopped 3'");
    }

    @Test
    void readsTheTerminatedBackendsAndTheQueueDepths() {
        assertThat(ctl.terminateBackends()).isEqualTo(14);
        assertThat(ctl.queueDepths()).isEqualTo(Map.of("jobs.attempts", 12L, "jobs.attempts.dlq", 3L));
    }

    @Test
    void sendsEachActionWithItsArguments() throws Exception {
        ctl.kill("worker-1");
        ctl.spawn("worker-1");
        ctl.revive(List.of("api-2", "worker-3"));
        ctl.deleteQueue("jobs.attempts");

        assertThat(Files.readAllLines(calls))
                .containsExactly(
                        "ctl kill worker-1",
                        "ctl spawn worker-1",
                        "ctl revive api-2 worker-3",
                        "ctl mq-delete-queue jobs.attempts");
    }

    @Test
    void aFailedActionFailsWithWhatTheScriptSaid() {
        assertThatThrownBy(ctl::restartBroker)
                .hasMessageContaining("ctl mq-restart failed (1)")
                .hasMessageContaining("rabbitmqctl: node down");
    }
}
