package dev.jobapi.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** The fake provider's own log of what it received and answered ({@code GET /fake/requests}). */
final class FakeLog {

    private final URI fake;
    private final HttpClient http = HttpClient.newHttpClient();

    FakeLog(URI fake) {
        this.fake = fake;
    }

    JsonNode fetch() {
        return get("/fake/requests");
    }

    /** Each read of stored completions the fake answered: {@code at}, {@code attemptId}, {@code found}. */
    JsonNode lookups() {
        return get("/fake/lookups");
    }

    private JsonNode get(String path) {
        try {
            HttpResponse<String> response = http.send(
                    // Bounded: a fake that cannot answer must not hang the drain and the check.
                    HttpRequest.newBuilder(fake.resolve(path))
                            .timeout(Duration.ofSeconds(60))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                throw new IllegalStateException("GET " + path + " -> " + response.statusCode());
            }
            return Api.JSON.readTree(response.body());
        } catch (IOException e) {
            throw new IllegalStateException("fake provider unreachable: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted reading the fake provider's " + path, e);
        }
    }

    /** Attempts for which the provider stored a complete answer (what a reconciler can still find). */
    Set<String> storedCompletionAttempts() {
        Set<String> attempts = new HashSet<>();
        for (JsonNode request : fetch()) {
            JsonNode step = request.path("step");
            // A broken stream stores nothing a lookup could find. An answer cut off at the output limit
            // is stored, and the reconciler records it (failed, with its usage): the drain waits for it.
            boolean incomplete = step.path("abortAfterFirstToken").asBoolean(false);
            if (request.path("status").asInt() == 200 && !incomplete && request.hasNonNull("attemptId")) {
                attempts.add(request.get("attemptId").asText());
            }
        }
        return attempts;
    }

    static List<Checker.ProviderRequest> requests(JsonNode log) {
        List<Checker.ProviderRequest> requests = new ArrayList<>();
        for (JsonNode request : log) {
            JsonNode usage = request.path("usage");
            requests.add(new Checker.ProviderRequest(
                    request.hasNonNull("attemptId") ? request.get("attemptId").asText() : null,
                    request.hasNonNull("status") ? request.get("status").asInt() : null,
                    usage.hasNonNull("promptTokens") ? usage.get("promptTokens").asInt() : null,
                    usage.hasNonNull("completionTokens")
                            ? usage.get("completionTokens").asInt()
                            : null));
        }
        return requests;
    }

    static void save(JsonNode log, Path file) throws IOException {
        Files.writeString(file, Api.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(log));
    }

    static JsonNode load(Path file) throws IOException {
        return Api.JSON.readTree(file.toFile());
    }
}
