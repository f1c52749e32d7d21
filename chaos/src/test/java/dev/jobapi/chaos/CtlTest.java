package dev.jobapi.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
                        "  'mq-close-connections ') echo 'closed 5' ;;",
                        "  'mq-leader jobs.attempts') echo 2 ;;",
                        "  'mq-node-kill 2') echo 'killed 2 pid 4711' ;;",
                        "  'mq-node-pause 3') echo 'paused 3 pid 4712' ;;",
                        "  'mq-node-resume 3') echo 'resumed 3 pid 4712' ;;",
                        "  'mq-partitions ') printf '1 partitions chaos-c3@localhost\\n2 partitions \\n' ;;",
                        "  'mq-watch ') printf '%s\\n' 'queue jobs.attempts consumers 3 members 3 online 2 leader chaos-c1@localhost'"
                                + " 'conn api-1 chaos-c1@localhost jobapi-broker-connection'"
                                + " 'conn worker-1 chaos-c2@localhost jobapi-attempt-consumer'"
                                + " 'conn worker-1 chaos-c2@localhost jobapi-broker-connection' ;;",
                        "  'pg-pause standby') echo 'paused b pid 99' ;;",
                        "  'jdbc-threads ') printf 'api-1 0 \\nworker-2 2 executor-thread-1|lease-keeper-0\\n' ;;",
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
    void readsTheClusterRigsAnswers() {
        assertThat(ctl.closeBrokerConnections()).isEqualTo(5);
        assertThat(ctl.leader("jobs.attempts")).isEqualTo(2);
        assertThat(ctl.killNode(2)).isEqualTo(4711L);
        assertThat(ctl.pauseNode(3)).isEqualTo(4712L);
        assertThat(ctl.resumeNode(3)).isEqualTo(4712L);
        assertThat(ctl.partitions()).isEqualTo(Map.of(1, List.of("chaos-c3@localhost"), 2, List.of()));
        assertThat(ctl.pauseDatabase("standby")).isEqualTo("paused b pid 99");
        assertThat(ctl.jdbcThreads())
                .isEqualTo(Map.of("api-1", Set.of(), "worker-2", Set.of("executor-thread-1", "lease-keeper-0")));

        Facts.Watch watch = ctl.watch();
        assertThat(watch.queues().get("jobs.attempts"))
                .isEqualTo(new Facts.QueueState("jobs.attempts", 3, 3, 2, "chaos-c1@localhost"));
        assertThat(watch.connectionsPerService()).isEqualTo(Map.of("api-1", 1, "worker-1", 2));
        assertThat(watch.servicesWith(Recovery.CONSUMER_CONNECTION)).containsExactly("worker-1");
        assertThat(Faults.workerOnlyNode(watch)).isEqualTo(2);
    }

    @Test
    void anAnswerThatSaysNothingHappenedOrIsOutsideTheProtocolFails() {
        assertThatThrownBy(() -> Facts.count("closed", "closed")).hasMessageContaining("not 'closed N'");
        assertThatThrownBy(() -> Facts.pid("killed 2", "killed")).hasMessageContaining("'killed 2'");
        assertThatThrownBy(() -> ctl.leader("jobs.attempts.dlq")).hasMessageContaining("mq-leader answered ''");
        assertThat(Faults.workerOnlyNode(Facts.Watch.parse("conn api-1 chaos-c1@localhost x")))
                .isZero();
        // Clients spread at random: with no node of workers alone, the one with the most of theirs.
        assertThat(Faults.workerOnlyNode(Facts.Watch.parse("conn api-1 chaos-c1@localhost x\n"
                        + "conn worker-2 chaos-c1@localhost y\nconn api-2 chaos-c2@localhost z\n"
                        + "conn worker-1 chaos-c2@localhost u\nconn worker-3 chaos-c2@localhost v")))
                .isEqualTo(2);
    }

    @Test
    void aFailedActionFailsWithWhatTheScriptSaid() {
        assertThatThrownBy(ctl::restartBroker)
                .hasMessageContaining("ctl mq-restart failed (1)")
                .hasMessageContaining("rabbitmqctl: node down");
    }
}
