package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Integrators call the API with whatever HTTP client their platform has. Java's own client, left at
 * its defaults, asks to upgrade every cleartext request to HTTP/2 (h2c, {@code Upgrade: h2c}); a
 * POST carrying a body with that offer must reach the endpoint like any other.
 */
@QuarkusTest
class DefaultHttpClientTest extends ApiTestSupport {

    @TestHTTPResource("/jobs")
    URI jobs;

    @Test
    void javasHttpClientAtItsDefaultsSubmitsAJob() throws Exception {
        HttpClient client = HttpClient.newHttpClient();
        HttpResponse<String> response = client.send(
                HttpRequest.newBuilder(jobs)
                        .header("Authorization", "Bearer " + Tokens.user("alice"))
                        .header("Content-Type", "application/json")
                        .header("Idempotency-Key", "default-client-" + UUID.randomUUID())
                        .POST(HttpRequest.BodyPublishers.ofString(JOB_BODY))
                        .build(),
                HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        assertThat(count("SELECT count(*) FROM job")).isEqualTo(1);
    }
}
