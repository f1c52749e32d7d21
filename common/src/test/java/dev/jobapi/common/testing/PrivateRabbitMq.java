package dev.jobapi.common.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A RabbitMQ node of a test's own (its node name, AMQP and distribution ports, files under
 * /tmp), for tests that stop, freeze or otherwise disturb a broker: the machine's node on 5672 is
 * everyone's and is never touched. Started from Debian's {@code rabbitmq-server} as the
 * {@code rabbitmq} user, as the chaos soak starts its own; needs root (CI runs as root).
 */
public final class PrivateRabbitMq implements AutoCloseable {

    private static final Path SERVER = Path.of("/usr/lib/rabbitmq/bin/rabbitmq-server");
    private static final Path CTL = Path.of("/usr/lib/rabbitmq/bin/rabbitmqctl");

    public static final String USER = "jobapi";
    public static final String PASSWORD = "jobapi";

    /**
     * The broker settings the project deploys with (the {@code advancedConfig} of the
     * {@code RabbitmqCluster}s in k8s/overlays, the chaos rigs' nodes; docs/design.md, "The delay
     * queue's return"): RabbitMQ's at-least-once dead-letter worker sends again what found no queue,
     * or was not confirmed, after 20 s instead of its default 180 s.
     */
    public static final String DEPLOYED_RABBIT_SETTINGS = "{dead_letter_worker_publisher_confirm_timeout, 20000}";

    private final String node;
    private final int amqpPort;
    private final Path base;

    /** A node listening on {@code amqpPort}, its distribution on the port after it. */
    public PrivateRabbitMq(String name, int amqpPort) {
        this.node = name + "@localhost";
        this.amqpPort = amqpPort;
        this.base = Path.of("/tmp/jobapi-test-rabbitmq-" + name);
    }

    /** Whether this machine can run one: Debian's server is installed and we are root. */
    public static boolean available() {
        return Files.isExecutable(SERVER) && "root".equals(System.getProperty("user.name"));
    }

    public int amqpPort() {
        return amqpPort;
    }

    /** Starts the node afresh (no data kept from an earlier run) with the user {@link #USER} on vhost {@code /}. */
    public void start() {
        try {
            stopQuietly();
            deleteBase();
            Files.createDirectories(base.resolve("mnesia"));
            Files.createDirectories(base.resolve("log"));
            Files.writeString(
                    base.resolve("rabbitmq.conf"),
                    "listeners.tcp.1 = 127.0.0.1:" + amqpPort + "\nloopback_users = none\n");
            Files.writeString(base.resolve("advanced.config"), "[{rabbit, [" + DEPLOYED_RABBIT_SETTINGS + "]}].\n");
            Files.writeString(base.resolve("enabled_plugins"), "[].\n");
            Files.writeString(
                    base.resolve("rabbitmq-env.conf"),
                    "ERL_EPMD_ADDRESS=127.0.0.1\nexport ERL_FLAGS=\"-kernel inet_dist_use_interface {127,0,0,1}\"\n");
            run(60, "chown", "-R", "rabbitmq:rabbitmq", base.toString());
            runAsRabbitmq(30, SERVER.toString(), "-detached");
            // Waits for the pid file, then for the node's distribution and applications.
            ctl(120, "wait", base.resolve("node.pid").toString());
            ctl(30, "add_user", USER, PASSWORD);
            ctl(30, "set_permissions", "-p", "/", USER, ".*", ".*", ".*");
        } catch (IOException e) {
            throw new IllegalStateException("Could not start the private RabbitMQ node " + node, e);
        }
    }

    /** Stops the broker application, leaving the node's VM up (its AMQP port refuses connections). */
    public void stopApp() {
        ctl(60, "stop_app");
    }

    /** Starts the broker application again after {@link #stopApp()}. */
    public void startApp() {
        ctl(60, "start_app");
        ctl(120, "await_startup");
    }

    /** Evaluates an Erlang expression on the node ({@code rabbitmqctl eval}) and returns what it printed. */
    public String eval(String expression) {
        return ctl(60, "eval", expression);
    }

    /** rabbitmqctl against this node; fails the test when the command fails. */
    public String ctl(int timeoutSeconds, String... args) {
        List<String> command = new ArrayList<>(List.of(CTL.toString(), "-n", node));
        command.addAll(List.of(args));
        return runAsRabbitmq(timeoutSeconds, command.toArray(String[]::new));
    }

    @Override
    public void close() {
        stopQuietly();
        try {
            deleteBase();
        } catch (IOException e) {
            // Left for the next start, which deletes it first.
        }
    }

    /** Stops the node and waits for its VM to exit (the pid file tells which process to wait for). */
    private void stopQuietly() {
        Path pidFile = base.resolve("node.pid");
        try {
            if (Files.exists(pidFile)) {
                ctl(60, "stop", pidFile.toString());
            } else {
                ctl(60, "stop");
            }
        } catch (IllegalStateException notRunning) {
            // Nothing to stop.
        }
    }

    private void deleteBase() throws IOException {
        if (!Files.exists(base)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(base)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }

    private String runAsRabbitmq(int timeoutSeconds, String... command) {
        List<String> full = new ArrayList<>(List.of(
                "runuser",
                "-u",
                "rabbitmq",
                "--",
                "env",
                "RABBITMQ_NODENAME=" + node,
                "RABBITMQ_NODE_IP_ADDRESS=127.0.0.1",
                "RABBITMQ_NODE_PORT=" + amqpPort,
                "RABBITMQ_DIST_PORT=" + (amqpPort + 1),
                "RABBITMQ_CONF_ENV_FILE=" + base.resolve("rabbitmq-env.conf"),
                "RABBITMQ_CONFIG_FILE=" + base.resolve("rabbitmq.conf"),
                "RABBITMQ_ADVANCED_CONFIG_FILE=" + base.resolve("advanced.config"),
                "RABBITMQ_ENABLED_PLUGINS_FILE=" + base.resolve("enabled_plugins"),
                "RABBITMQ_MNESIA_BASE=" + base.resolve("mnesia"),
                "RABBITMQ_LOG_BASE=" + base.resolve("log"),
                "RABBITMQ_PID_FILE=" + base.resolve("node.pid"),
                "HOME=/var/lib/rabbitmq"));
        full.addAll(List.of(command));
        return run(timeoutSeconds, full.toArray(String[]::new));
    }

    /** Runs a command with its output in a file, so a daemon keeping the pipe open cannot hang the test. */
    private static String run(int timeoutSeconds, String... command) {
        Path output = null;
        try {
            output = Files.createTempFile("private-rabbitmq", ".out");
            Process process = new ProcessBuilder(command)
                    .directory(Path.of("/").toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(output.toFile())
                    .redirectInput(
                            ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
                    .start();
            if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException(
                        String.join(" ", command) + " did not finish in " + timeoutSeconds + " s");
            }
            String text = Files.readString(output, StandardCharsets.UTF_8);
            if (process.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed: " + text);
            }
            return text;
        } catch (IOException e) {
            throw new IllegalStateException("Could not run " + command[0], e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted running " + command[0], e);
        } finally {
            if (output != null) {
                output.toFile().delete();
            }
        }
    }
}
