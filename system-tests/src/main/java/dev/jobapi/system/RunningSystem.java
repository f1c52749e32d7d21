package dev.jobapi.system;

import static org.awaitility.Awaitility.await;

import io.smallrye.jwt.build.Jwt;
import io.smallrye.jwt.util.KeyUtils;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The product as it is deployed, for tests that need processes: the packaged api, worker and fake
 * provider jars, each a JVM of its own on free ports, over the tests' database and vhost
 * (JOBAPI_TEST_DB_URL, JOBAPI_TEST_VHOST) with bin/dev's configuration. A test starts what it needs,
 * may kill a process (SIGKILL: what a node loss does to it) and start it again on the same ports,
 * and stops everything at the end. Logs go to {@code logs}, one file a process.
 */
public final class RunningSystem implements AutoCloseable {

    /** What the api's tests and bin/dev's fake provider sign callbacks with. */
    private static final String CALLBACK_SECRET = "running-system-callback-secret";

    private static final HttpClient HTTP =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    /** One process of the system: its name, ports and how it was started, so it can be started again. */
    public final class Service {
        private final String name;
        private final Path jar;
        private final Map<String, String> environment;
        private final int port;
        private final int managementPort;
        private Process process;

        private Service(String name, Path jar, Map<String, String> environment, int port, int managementPort) {
            this.name = name;
            this.jar = jar;
            this.environment = environment;
            this.port = port;
            this.managementPort = managementPort;
        }

        /** The public port's base address, without a trailing slash. */
        public String url() {
            return "http://127.0.0.1:" + port;
        }

        public int port() {
            return port;
        }

        /** SIGKILL: no shutdown hook runs, every connection drops as a lost node drops them. */
        public void kill() throws InterruptedException {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }

        /** Starts the process again with the same ports and settings, and waits until it is ready. */
        public void restart() throws IOException {
            launch();
            awaitReady();
        }

        private void launch() throws IOException {
            if (!Files.isRegularFile(jar)) {
                throw new IllegalStateException(jar + " is missing: package " + name + " first");
            }
            ProcessBuilder builder = new ProcessBuilder(java(), "-Xmx256m", "-jar", jar.toString())
                    .directory(jar.getParent().toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(
                            logs.resolve(name + ".log").toFile()));
            builder.environment().putAll(environment);
            process = builder.start();
        }

        private void awaitReady() {
            String probe = managementPort == 0
                    ? url() + "/fake/requests"
                    : "http://127.0.0.1:" + managementPort + "/q/health/ready";
            // Two minutes: several JVMs start at once on a machine the other suites share.
            await().atMost(Duration.ofMinutes(2))
                    .pollInterval(Duration.ofMillis(500))
                    .ignoreExceptions()
                    .until(() -> status(probe) == 200);
        }

        private void stop() {
            if (process == null || !process.isAlive()) {
                return;
            }
            process.destroy();
            try {
                if (!process.waitFor(20, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
    }

    private final Path root;
    private final Path logs;
    private final String databaseUrl;
    private final String virtualHost;
    private final List<Service> started = new ArrayList<>();

    /** The system of the checkout at {@code root}, logging to {@code logs}. */
    public RunningSystem(Path root, Path logs) throws IOException {
        this.root = root.toAbsolutePath().normalize();
        this.logs = Files.createDirectories(logs);
        this.databaseUrl = env("JOBAPI_TEST_DB_URL", "jdbc:postgresql://127.0.0.1:5432/jobapi_test");
        this.virtualHost = env("JOBAPI_TEST_VHOST", "jobapi-test");
    }

    /** Starts the fake provider; answers at once unless scripted. */
    public Service fakeProvider(String apiUrlForCallbacks) throws IOException {
        int port = freePort();
        return start(
                "fake-provider",
                root.resolve("fake-provider/target/fake-provider.jar"),
                Map.of(
                        "FAKE_PROVIDER_PORT", String.valueOf(port),
                        "FAKE_CALLBACK_BASE_URL", apiUrlForCallbacks,
                        "FAKE_CALLBACK_SECRET", CALLBACK_SECRET),
                port,
                0);
    }

    /** Starts an api process on {@code port} (see {@link #freePort()}), with bin/dev's settings and {@code extra}. */
    public Service api(String name, int port, Map<String, String> extra) throws IOException {
        Map<String, String> environment = new HashMap<>(Map.of(
                "QUARKUS_CONFIG_LOCATIONS",
                root.resolve("dev/config/api-service.properties").toString(),
                "JOBAPI_JWT_PUBLIC_KEY_LOCATION",
                "file:" + root.resolve("dev/jwt/public.pem"),
                "JOBAPI_FAKE_CALLBACK_SECRET",
                CALLBACK_SECRET));
        environment.putAll(extra);
        return startQuarkus(name, root.resolve("api-service/target/quarkus-app/quarkus-run.jar"), port, environment);
    }

    /** Starts a worker calling the fake provider, applying patches to a fresh demo repository. */
    public Service worker(String name, Service fakeProvider) throws Exception {
        return startQuarkus(
                name,
                root.resolve("worker-service/target/quarkus-app/quarkus-run.jar"),
                freePort(),
                Map.of(
                        "QUARKUS_CONFIG_LOCATIONS",
                                root.resolve("dev/config/worker-service.properties")
                                        .toString(),
                        "JOBAPI_PROVIDERS_BASE_URL", fakeProvider.url(),
                        "JOBAPI_APPLY_GIT_REPOSITORY", seededRepository().toString()));
    }

    /** A bearer token the dev key signs, for {@code subject} in {@code roles}. */
    public String token(String subject, String... roles) throws Exception {
        return Jwt.issuer("jobapi-dev")
                .audience("jobapi")
                .subject(subject)
                .groups(Set.of(roles.length == 0 ? new String[] {"user"} : roles))
                .expiresIn(Duration.ofMinutes(30))
                .sign(KeyUtils.decodePrivateKey(Files.readString(root.resolve("dev/jwt/private.pem"))));
    }

    /** Stops every process started, politely first. */
    @Override
    public void close() {
        started.forEach(Service::stop);
    }

    /** A port nobody listens on now. */
    public static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    /** The status of a GET. */
    public static int status(String url) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.discarding())
                .statusCode();
    }

    private Service startQuarkus(String name, Path jar, int port, Map<String, String> settings) throws IOException {
        Map<String, String> environment = new HashMap<>(settings);
        environment.put("QUARKUS_HTTP_PORT", String.valueOf(port));
        int managementPort = freePort();
        environment.put("QUARKUS_MANAGEMENT_PORT", String.valueOf(managementPort));
        environment.put("JOBAPI_DB_URL", databaseUrl);
        environment.put("JOBAPI_RABBITMQ_VHOST", virtualHost);
        return start(name, jar, environment, port, managementPort);
    }

    private Service start(String name, Path jar, Map<String, String> environment, int port, int managementPort)
            throws IOException {
        Service service = new Service(name, jar, environment, port, managementPort);
        service.launch();
        started.add(service);
        service.awaitReady();
        return service;
    }

    /** The demo repository the worker applies patches to, as bin/dev seeds it. */
    private Path seededRepository() throws Exception {
        Path repository = Files.createTempDirectory("running-system-repo");
        run(List.of(
                java(),
                "-jar",
                root.resolve("fake-provider/target/fake-provider.jar").toString(),
                "seed-demo-repo",
                repository.toString()));
        run(List.of("git", "-C", repository.toString(), "init", "-q", "-b", "main"));
        run(List.of("git", "-C", repository.toString(), "add", "-A"));
        run(List.of(
                "git",
                "-C",
                repository.toString(),
                "-c",
                "user.name=jobapi test",
                "-c",
                "user.email=test@jobapi.invalid",
                "-c",
                "commit.gpgsign=false",
                "commit",
                "-q",
                "-m",
                "demo: initial"));
        return repository;
    }

    private void run(List<String> command) throws Exception {
        Process process = new ProcessBuilder(command)
                .directory(root.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(
                        logs.resolve("setup.log").toFile()))
                .start();
        if (process.waitFor() != 0) {
            throw new IllegalStateException(command + " exited " + process.exitValue() + "; see " + logs);
        }
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }
}
