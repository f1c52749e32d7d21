package dev.jobapi.generated;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jobapi.generated.api.JobResourceApi;
import dev.jobapi.generated.model.CreateJob;
import dev.jobapi.generated.model.JobState;
import dev.jobapi.generated.model.JobView;
import io.smallrye.jwt.build.Jwt;
import io.smallrye.jwt.util.KeyUtils;
import java.io.File;
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
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The client openapi-generator made from the api's document (this module's build) drives a real job:
 * the api, the worker and the fake provider run as the packaged jars, on ports of their own, over the
 * tests' database and vhost (JOBAPI_TEST_DB_URL, JOBAPI_TEST_VHOST). Whatever the generated code needs
 * to know (the Idempotency-Key it must send, the types it reads back) it took from the document.
 */
class GeneratedClientIT {

    private static final Path ROOT =
            Path.of(System.getProperty("jobapi.root")).toAbsolutePath().normalize();
    private static final Path LOGS = ROOT.resolve("generated-client/target/it-logs");
    private static final List<Process> STARTED = new ArrayList<>();
    private static final HttpClient HTTP =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private static int apiPort;

    @BeforeAll
    static void startTheSystem() throws Exception {
        Files.createDirectories(LOGS);
        String dbUrl = env("JOBAPI_TEST_DB_URL", "jdbc:postgresql://127.0.0.1:5432/jobapi_test");
        String vhost = env("JOBAPI_TEST_VHOST", "jobapi-test");
        String callbackSecret = "generated-client-callback-secret";
        int fakePort = freePort();
        apiPort = freePort();
        int apiManagement = freePort();
        int workerPort = freePort();
        int workerManagement = freePort();
        Path repository = seededRepository();

        start(
                "fake-provider",
                ROOT.resolve("fake-provider/target/fake-provider.jar"),
                Map.of(
                        "FAKE_PROVIDER_PORT",
                        String.valueOf(fakePort),
                        "FAKE_CALLBACK_BASE_URL",
                        "http://127.0.0.1:" + apiPort,
                        "FAKE_CALLBACK_SECRET",
                        callbackSecret));
        start(
                "api-service",
                ROOT.resolve("api-service/target/quarkus-app/quarkus-run.jar"),
                Map.of(
                        "QUARKUS_HTTP_PORT",
                        String.valueOf(apiPort),
                        "QUARKUS_MANAGEMENT_PORT",
                        String.valueOf(apiManagement),
                        "QUARKUS_CONFIG_LOCATIONS",
                        ROOT.resolve("dev/config/api-service.properties").toString(),
                        "JOBAPI_JWT_PUBLIC_KEY_LOCATION",
                        "file:" + ROOT.resolve("dev/jwt/public.pem"),
                        "JOBAPI_FAKE_CALLBACK_SECRET",
                        callbackSecret,
                        "JOBAPI_DB_URL",
                        dbUrl,
                        "JOBAPI_RABBITMQ_VHOST",
                        vhost));
        start(
                "worker-service",
                ROOT.resolve("worker-service/target/quarkus-app/quarkus-run.jar"),
                Map.of(
                        "QUARKUS_HTTP_PORT", String.valueOf(workerPort),
                        "QUARKUS_MANAGEMENT_PORT", String.valueOf(workerManagement),
                        "QUARKUS_CONFIG_LOCATIONS",
                                ROOT.resolve("dev/config/worker-service.properties")
                                        .toString(),
                        "JOBAPI_PROVIDERS_BASE_URL", "http://127.0.0.1:" + fakePort,
                        "JOBAPI_APPLY_GIT_REPOSITORY", repository.toString(),
                        "JOBAPI_DB_URL", dbUrl,
                        "JOBAPI_RABBITMQ_VHOST", vhost));
        // Two minutes: three JVMs start at once on a machine the other suites share.
        await().atMost(Duration.ofMinutes(2))
                .pollInterval(Duration.ofMillis(500))
                .ignoreExceptions()
                .until(() -> status("http://127.0.0.1:" + apiManagement + "/q/health/ready") == 200
                        && status("http://127.0.0.1:" + workerManagement + "/q/health/ready") == 200
                        && status("http://127.0.0.1:" + fakePort + "/fake/requests") == 200);
    }

    @AfterAll
    static void stopTheSystem() {
        STARTED.forEach(Process::destroy);
        for (Process process : STARTED) {
            try {
                if (!process.waitFor(20, java.util.concurrent.TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
    }

    @Test
    void theClientWasGeneratedFromTheDocumentTheRunningApiServes() throws Exception {
        ObjectMapper json = new ObjectMapper();
        JsonNode served = json.readTree(get("http://127.0.0.1:" + apiPort + "/q/openapi?format=json"));
        JsonNode generatedFrom = json.readTree(new File(System.getProperty("jobapi.served-document")));
        assertThat(served).isEqualTo(generatedFrom);
    }

    @Test
    void aGeneratedClientSubmitsAJobWithItsKeyAndFollowsItToCompletion() throws Exception {
        ApiClient client = new ApiClient();
        client.updateBaseUri("http://127.0.0.1:" + apiPort);
        client.setHttpClientBuilder(HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1));
        String token = token("generated-alice");
        client.setRequestInterceptor(request -> request.header("Authorization", "Bearer " + token));
        JobResourceApi jobs = new JobResourceApi(client);
        CreateJob body = new CreateJob()
                .input(Map.of("prompt", "fix the off-by-one", "repository", "demo", "baseRef", "main"))
                .provider("fake-a");
        String key = UUID.randomUUID().toString();

        ApiResponse<JobView> created = jobs.createJobWithHttpInfo(key, body, null);
        assertThat(created.getStatusCode()).isEqualTo(201);
        assertThat(created.getHeaders().get("location"))
                .containsExactly("/jobs/" + created.getData().getId());
        // The same intention again, with its key: the same job, replayed.
        ApiResponse<JobView> replayed = jobs.createJobWithHttpInfo(key, body, null);
        assertThat(replayed.getStatusCode()).isEqualTo(200);
        assertThat(replayed.getHeaders().get("idempotent-replayed")).containsExactly("true");
        assertThat(replayed.getData().getId()).isEqualTo(created.getData().getId());

        UUID id = created.getData().getId();
        JobView done = await().atMost(Duration.ofMinutes(1))
                .pollInterval(Duration.ofMillis(300))
                .until(() -> jobs.getJob(id, null, null), job -> job.getState() == JobState.COMPLETED);
        assertThat(done.getWinningAttemptId()).isNotNull();
        assertThat(done.getAttempts()).hasSize(1);
    }

    private static String token(String subject) throws Exception {
        return Jwt.issuer("jobapi-dev")
                .audience("jobapi")
                .subject(subject)
                .groups(Set.of("user"))
                .expiresIn(Duration.ofMinutes(30))
                .sign(KeyUtils.decodePrivateKey(Files.readString(ROOT.resolve("dev/jwt/private.pem"))));
    }

    /** The demo repository the worker applies patches to, as bin/dev seeds it. */
    private static Path seededRepository() throws Exception {
        Path repository = Files.createTempDirectory("generated-client-repo");
        run(
                List.of(
                        java(),
                        "-jar",
                        ROOT.resolve("fake-provider/target/fake-provider.jar").toString(),
                        "seed-demo-repo",
                        repository.toString()),
                ROOT);
        run(List.of("git", "init", "-q", "-b", "main"), repository);
        run(List.of("git", "add", "-A"), repository);
        run(
                List.of(
                        "git",
                        "-c",
                        "user.name=jobapi test",
                        "-c",
                        "user.email=test@jobapi.invalid",
                        "-c",
                        "commit.gpgsign=false",
                        "commit",
                        "-q",
                        "-m",
                        "demo: initial"),
                repository);
        return repository;
    }

    private static void run(List<String> command, Path directory) throws Exception {
        Process process = new ProcessBuilder(command)
                .directory(directory.toFile())
                .redirectErrorStream(true)
                .redirectOutput(LOGS.resolve("setup.log").toFile())
                .start();
        if (process.waitFor() != 0) {
            throw new IllegalStateException(command + " exited " + process.exitValue() + "; see " + LOGS);
        }
    }

    private static void start(String name, Path jar, Map<String, String> environment) throws IOException {
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException(jar + " is missing: package " + name + " first");
        }
        ProcessBuilder builder = new ProcessBuilder(java(), "-Xmx256m", "-jar", jar.toString())
                .directory(jar.getParent().toFile())
                .redirectErrorStream(true)
                .redirectOutput(LOGS.resolve(name + ".log").toFile());
        builder.environment().putAll(environment);
        STARTED.add(builder.start());
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    private static int status(String url) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.discarding())
                .statusCode();
    }

    private static String get(String url) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString())
                .body();
    }
}
