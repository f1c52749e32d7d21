package dev.jobapi.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/** What one request of a run is, and which status means it did what it should. */
final class Scenario {

    /** The body of every POST /jobs: what the page sends for a small job at the default provider. */
    static final String JOB_BODY =
            "{\"input\":{\"prompt\":\"bench: fix the off-by-one\",\"repository\":\"demo\",\"baseRef\":\"main\"},"
                    + "\"provider\":\"fake-a\"}";

    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

    private final String baseUrl;
    private final String token;
    private final Kind kind;
    private final List<String> values;
    // Keys unique to this process, so two runs against one database never replay each other's jobs.
    private final String keyPrefix = "bench-" + ProcessHandle.current().pid() + "-" + System.nanoTime() + "-";
    private final AtomicLong sequence = new AtomicLong();

    private enum Kind {
        FRESH_POST(201),
        REPLAYED_POST(200),
        GET(200);

        final int expectedStatus;

        Kind(int expectedStatus) {
            this.expectedStatus = expectedStatus;
        }
    }

    private Scenario(String baseUrl, String token, Kind kind, List<String> values) {
        this.baseUrl = baseUrl;
        this.token = token;
        this.kind = kind;
        this.values = values;
    }

    /**
     * Builds the scenario; for replays, first creates the jobs to replay (unmeasured), so every
     * measured request is a replay of a job that exists.
     */
    static Scenario of(Options options, HttpClient client) throws IOException, InterruptedException {
        switch (options.scenario()) {
            case "post-fresh":
                return new Scenario(options.baseUrl(), options.token(), Kind.FRESH_POST, List.of());
            case "post-replay":
                Scenario creator = new Scenario(options.baseUrl(), options.token(), Kind.FRESH_POST, List.of());
                List<String> keys = new ArrayList<>();
                for (int i = 0; i < options.replayKeys(); i++) {
                    String key = creator.keyPrefix + "replayed-" + i;
                    HttpResponse<String> created = client.send(creator.post(key), HttpResponse.BodyHandlers.ofString());
                    if (created.statusCode() != 201) {
                        throw new IllegalStateException(
                                "Creating the job to replay answered " + created.statusCode() + ": " + created.body());
                    }
                    keys.add(key);
                }
                return new Scenario(options.baseUrl(), options.token(), Kind.REPLAYED_POST, List.copyOf(keys));
            case "get":
                Path file = options.idsFile().orElseThrow();
                List<String> ids = Files.readAllLines(file).stream()
                        .map(String::strip)
                        .filter(line -> !line.isEmpty())
                        .toList();
                if (ids.isEmpty()) {
                    throw new IllegalArgumentException("No job ids in " + file);
                }
                return new Scenario(options.baseUrl(), options.token(), Kind.GET, ids);
            default:
                throw new IllegalArgumentException("Unknown scenario: " + options.scenario());
        }
    }

    int expectedStatus() {
        return kind.expectedStatus;
    }

    HttpRequest next() {
        return switch (kind) {
            case FRESH_POST -> post(keyPrefix + sequence.incrementAndGet());
            case REPLAYED_POST -> post(values.get((int) (sequence.incrementAndGet() % values.size())));
            case GET -> authorized(URI.create(baseUrl + "/jobs/" + randomValue()))
                    .GET()
                    .build();
        };
    }

    private String randomValue() {
        return values.get(ThreadLocalRandom.current().nextInt(values.size()));
    }

    private HttpRequest post(String idempotencyKey) {
        return authorized(URI.create(baseUrl + "/jobs"))
                .header("Content-Type", "application/json")
                .header("Idempotency-Key", idempotencyKey)
                .POST(HttpRequest.BodyPublishers.ofString(JOB_BODY))
                .build();
    }

    private HttpRequest.Builder authorized(URI uri) {
        return HttpRequest.newBuilder(uri).timeout(REQUEST_TIMEOUT).header("Authorization", "Bearer " + token);
    }
}
