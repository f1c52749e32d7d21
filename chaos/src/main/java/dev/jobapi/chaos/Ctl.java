package dev.jobapi.chaos;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The one seam between the driver and {@code chaos/run}: the script that started the soak's processes and
 * servers acts on them when the driver says so ({@code chaos/run ctl ACTION [ARG]...}) and reports the facts
 * only it can read. Every decision of the scenario stays on this side (what breaks when, in which order,
 * how long a rollout's grace is, what counts, when the system is drained); the script owns only how a named
 * process is started, signalled and supervised and how its servers are administered. Every action the
 * driver may ask for is a method here, and every answer is parsed here, once.
 */
class Ctl {

    /** How a rollout's stop ended. */
    enum StopOutcome {
        /** It exited within the grace. */
        EXITED,
        /** Still running after the grace: SIGKILL. */
        KILLED,
        /** Nothing to stop: a fault had just killed it. */
        NOT_RUNNING
    }

    /**
     * The answer to {@link #term}.
     *
     * @param outcome how it ended
     * @param seconds from the SIGTERM to the end (0 when it was not running)
     */
    record Stop(StopOutcome outcome, int seconds) {

        /** Reads the script's "exited S", "killed S" or "not-running". */
        static Stop parse(String answer) {
            String[] words = answer.strip().split("\\s+");
            return switch (words[0]) {
                case "exited" -> new Stop(StopOutcome.EXITED, Integer.parseInt(words[1]));
                case "killed" -> new Stop(StopOutcome.KILLED, Integer.parseInt(words[1]));
                case "not-running" -> new Stop(StopOutcome.NOT_RUNNING, 0);
                default -> throw new IllegalStateException("chaos/run ctl term answered '" + answer.strip() + "'");
            };
        }
    }

    private final String script;

    Ctl(String script) {
        this.script = script;
    }

    /** SIGKILL, as a node failure does; returns at once when it is not running. */
    void kill(String name) {
        run("kill", name);
    }

    /** A rollout's stop: SIGTERM, up to {@code graceSeconds} for it to exit, then SIGKILL. */
    Stop term(String name, int graceSeconds) {
        return Stop.parse(run("term", name, String.valueOf(graceSeconds)));
    }

    /** Starts it without waiting: it comes up while the load and the faults go on. */
    void spawn(String name) {
        run("spawn", name);
    }

    /** Starts it unless it runs, and waits until it is ready. */
    void start(String name) {
        run("start", name);
    }

    /** The supervisor's round: starts whatever is down, without waiting, except {@code leftAlone}. */
    void revive(Collection<String> leftAlone) {
        List<String> action = new ArrayList<>(List.of("revive"));
        action.addAll(leftAlone);
        run(action.toArray(String[]::new));
    }

    /** Starts every process that is down and waits until all are ready. */
    void ensureRunning() {
        run("ensure-running");
    }

    /**
     * {@code rabbitmqctl close_all_connections} on the soak's vhost; how many connections of that vhost there
     * were to close ("closed N"). Zero is a fault that did nothing: the caller fails it.
     */
    int closeBrokerConnections() {
        return Facts.count(run("mq-close-connections"), "closed");
    }

    void restartBroker() {
        run("mq-restart");
    }

    /** The cluster rig: a graceful restart of broker node {@code node} (1..3). */
    void restartBrokerNode(int node) {
        run("mq-restart", String.valueOf(node));
    }

    /** The cluster rig: the node (1..3) leading a quorum queue of the soak's vhost. */
    int leader(String queue) {
        String answer = Facts.lastLine(run("mq-leader", queue));
        try {
            return Integer.parseInt(answer);
        } catch (NumberFormatException e) {
            throw new IllegalStateException("chaos/run ctl mq-leader answered '" + answer + "'", e);
        }
    }

    /** SIGKILL of broker node {@code node}'s VM, by its pid file; the pid it killed. */
    long killNode(int node) {
        return Facts.pid(run("mq-node-kill", String.valueOf(node)), "killed");
    }

    /** Starts broker node {@code node} and waits until it booted and rejoined. */
    void startNode(int node) {
        run("mq-node-start", String.valueOf(node));
    }

    /** SIGSTOP of broker node {@code node}: a hung node, no reset; the pid. */
    long pauseNode(int node) {
        return Facts.pid(run("mq-node-pause", String.valueOf(node)), "paused");
    }

    long resumeNode(int node) {
        return Facts.pid(run("mq-node-resume", String.valueOf(node)), "resumed");
    }

    /**
     * Restarts node {@code node}'s broker application, which clears a partition it has recorded; tried three
     * times, since its {@code rabbitmqctl} calls can time out on a crowded machine (clustered run 11).
     */
    void healNode(int node) {
        for (int attempt = 1; ; attempt++) {
            try {
                run("mq-node-heal", String.valueOf(node));
                return;
            } catch (IllegalStateException e) {
                if (attempt == 3) {
                    throw e;
                }
            }
        }
    }

    /** The partitions each running broker node has recorded (the nodes it is partitioned from). */
    Map<Integer, List<String>> partitions() {
        return Facts.partitions(run("mq-partitions"));
    }

    /** The quorum queues and the AMQP connections of the soak's vhost, as the broker sees them now. */
    Facts.Watch watch() {
        return Facts.Watch.parse(run("mq-watch"));
    }

    /** SIGSTOP of the PostgreSQL server in {@code role} (primary or standby) and all its processes. */
    String pauseDatabase(String role) {
        return Facts.lastLine(run("pg-pause", role));
    }

    /** SIGCONT of PostgreSQL node {@code node} (as {@link #pauseDatabase} named it: "paused a pid P"). */
    String resumeDatabase(String node) {
        return Facts.lastLine(run("pg-resume", node));
    }

    /** SIGKILL of PostgreSQL node {@code node} (as {@link #pauseDatabase} named it) and all its processes. */
    String killDatabase(String node) {
        return Facts.lastLine(run("pg-kill", node));
    }

    /** Promotes the standby; its answer says how long the promotion took. */
    String promoteStandby() {
        return Facts.lastLine(run("pg-promote"));
    }

    /**
     * Per api and worker process: the names of its threads waiting on the database now (a thread dump, kept in
     * .chaos/logs, with a frame in pgjdbc's {@code PGStream.receive*}).
     */
    Map<String, Set<String>> jdbcThreads() {
        Map<String, Set<String>> threads = new java.util.TreeMap<>();
        for (String line : run("jdbc-threads").split("\n")) {
            String[] words = line.strip().split("\\s+", 3);
            if (words.length >= 2 && words[1].matches("\\d+")) {
                // Two threads may share a name (pgjdbc's "PostgreSQL JDBC driver connection thread"):
                // a set of names, not Set.of, which throws on a repeated element.
                threads.put(
                        words[0],
                        words.length == 3 ? new java.util.TreeSet<>(List.of(words[2].split("\\|"))) : Set.of());
            }
        }
        return threads;
    }

    /** Brings the node that is down back as the new (synchronous, unless the negative control) standby. */
    String rejoinStandby() {
        return Facts.lastLine(run("pg-rejoin"));
    }

    /** Deletes a queue of the soak's vhost; the services must declare it again themselves. */
    void deleteQueue(String queue) {
        run("mq-delete-queue", queue);
    }

    /**
     * pg_terminate_backend of every connection the services hold to the soak's database; how many. The count
     * is the answer's last line: a warning psql printed (the script's standard error comes with the answer)
     * precedes it, and must not turn a fault that happened into one that failed.
     */
    int terminateBackends() {
        String answer = run("pg-terminate").strip();
        String[] lines = answer.split("\n");
        try {
            return Integer.parseInt(lines[lines.length - 1].strip());
        } catch (NumberFormatException e) {
            throw new IllegalStateException("chaos/run ctl pg-terminate answered '" + answer + "'", e);
        }
    }

    void restartDatabase() {
        run("pg-restart");
    }

    /**
     * Messages per queue of the soak's vhost, ready and unacknowledged ({@code rabbitmqctl list_queues}: AMQP
     * tells a client only the ready ones); a queue that does not exist is absent.
     */
    Map<String, Long> queueDepths() {
        Map<String, Long> depths = new HashMap<>();
        for (String line : run("queues").split("\n")) {
            String[] fields = line.trim().split("\\s+");
            if (fields.length == 2) {
                depths.put(fields[0], Long.parseLong(fields[1]));
            }
        }
        return depths;
    }

    /** Runs an action to its end and returns its standard output; fails with its output when it fails. */
    private String run(String... action) {
        List<String> command = new ArrayList<>(List.of(script, "ctl"));
        command.addAll(List.of(action));
        try {
            Process process =
                    new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(5, TimeUnit.MINUTES)) {
                process.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " did not finish");
            }
            if (process.exitValue() != 0) {
                throw new IllegalStateException(
                        String.join(" ", command) + " failed (" + process.exitValue() + "): " + output.strip());
            }
            return output;
        } catch (IOException e) {
            throw new IllegalStateException("Cannot run " + command, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted running " + command, e);
        }
    }
}
