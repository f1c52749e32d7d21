package dev.jobapi.bench.baseline;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.smallrye.reactive.messaging.annotations.Blocking;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.reactive.messaging.Incoming;

/**
 * The naive end-to-end baseline of bench/run: takes a job from RabbitMQ, calls the provider once,
 * inserts what it answered and acks. None of the worker's guarantees: no claim, no lease, no
 * request key, no election, no usage budget; a redelivery calls the provider again and inserts a
 * second result.
 */
@ApplicationScoped
public class NaiveWorker {

    // The worker's provider read timeout; the fake provider answers at once.
    private static final Duration PROVIDER_TIMEOUT = Duration.ofSeconds(30);

    private final HttpClient client =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final EntityManager em;
    private final ObjectMapper mapper;
    private final URI completions;

    NaiveWorker(
            EntityManager em,
            ObjectMapper mapper,
            @ConfigProperty(name = "baseline.provider.base-url") String providerBaseUrl) {
        this.em = em;
        this.mapper = mapper;
        this.completions = URI.create(providerBaseUrl.replaceAll("/+$", "") + "/v1/chat/completions");
    }

    /** The message POST /naive/jobs publishes: the job's id, owner and prompt. */
    static String message(ObjectMapper mapper, BaselineJob job) {
        ObjectNode message = mapper.createObjectNode();
        message.put("jobId", job.id.toString());
        message.put("ownerId", job.ownerId);
        try {
            message.put("prompt", mapper.readTree(job.input).path("prompt").asText());
            message.put("model", job.provider);
            return mapper.writeValueAsString(message);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Acked when this returns; an exception nacks the message (the broker drops it: no retry either). */
    @Incoming("naive-jobs-in")
    @Blocking(value = "naive-workers", ordered = false)
    public void handle(String payload) throws IOException, InterruptedException {
        JsonNode job = mapper.readTree(payload);
        ObjectNode request = mapper.createObjectNode();
        request.put("model", job.path("model").asText());
        request.putArray("messages")
                .addObject()
                .put("role", "user")
                .put("content", job.path("prompt").asText());
        HttpResponse<String> response = client.send(
                HttpRequest.newBuilder(completions)
                        .timeout(PROVIDER_TIMEOUT)
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(request.toString()))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IOException("The provider answered " + response.statusCode() + ": " + response.body());
        }
        JsonNode completion = mapper.readTree(response.body());
        BaselineResult result = new BaselineResult();
        result.id = UUID.randomUUID();
        result.jobId = UUID.fromString(job.path("jobId").asText());
        result.ownerId = job.path("ownerId").asText();
        result.output = completion
                .path("choices")
                .path(0)
                .path("message")
                .path("content")
                .asText();
        JsonNode usage = completion.path("usage");
        result.promptTokens =
                usage.hasNonNull("prompt_tokens") ? usage.get("prompt_tokens").asInt() : null;
        result.completionTokens = usage.hasNonNull("completion_tokens")
                ? usage.get("completion_tokens").asInt()
                : null;
        result.createdAt = Instant.now();
        QuarkusTransaction.requiringNew().run(() -> em.persist(result));
    }
}
