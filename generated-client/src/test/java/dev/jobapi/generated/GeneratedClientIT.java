package dev.jobapi.generated;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jobapi.generated.api.JobResourceApi;
import dev.jobapi.generated.model.CreateJob;
import dev.jobapi.generated.model.JobState;
import dev.jobapi.generated.model.JobView;
import dev.jobapi.system.RunningSystem;
import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The client openapi-generator made from the api's document (this module's build) drives a real job:
 * the api, the worker and the fake provider run as the packaged jars ({@link RunningSystem}).
 * Whatever the generated code needs to know (the Idempotency-Key it must send, the types it reads
 * back) it took from the document.
 */
class GeneratedClientIT {

    private static final Path ROOT =
            Path.of(System.getProperty("jobapi.root")).toAbsolutePath().normalize();
    private static final HttpClient HTTP =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private static RunningSystem system;
    private static RunningSystem.Service api;

    @BeforeAll
    static void startTheSystem() throws Exception {
        system = new RunningSystem(ROOT, ROOT.resolve("generated-client/target/it-logs"));
        int apiPort = RunningSystem.freePort();
        RunningSystem.Service fake = system.fakeProvider("http://127.0.0.1:" + apiPort);
        api = system.api("api-service", apiPort, Map.of());
        system.worker("worker-service", fake);
    }

    @AfterAll
    static void stopTheSystem() {
        system.close();
    }

    @Test
    void theClientWasGeneratedFromTheDocumentTheRunningApiServes() throws Exception {
        ObjectMapper json = new ObjectMapper();
        JsonNode served = json.readTree(get(api.url() + "/q/openapi?format=json"));
        JsonNode generatedFrom = json.readTree(new File(System.getProperty("jobapi.served-document")));
        assertThat(served).isEqualTo(generatedFrom);
    }

    @Test
    void aGeneratedClientSubmitsAJobWithItsKeyAndFollowsItToCompletion() throws Exception {
        ApiClient client = new ApiClient();
        client.updateBaseUri(api.url());
        client.setHttpClientBuilder(HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1));
        String token = system.token("generated-alice");
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

    private static String get(String url) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString())
                .body();
    }
}
