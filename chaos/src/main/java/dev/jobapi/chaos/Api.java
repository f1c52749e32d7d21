package dev.jobapi.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.MissingNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * The api processes as the client load sees them: plain HTTP with a bearer token, and a count of
 * requests in flight per process so a fault can kill one mid-request.
 */
final class Api {

    /** One HTTP answer; {@code body} is a missing node when the answer was not JSON. */
    record Answer(int status, JsonNode body, boolean replayed) {
        boolean ok() {
            return status >= 200 && status < 300;
        }

        String code() {
            return body.path("code").asText("");
        }
    }

    static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(15);

    private final List<URI> bases;
    private final AtomicIntegerArray inFlight;
    private final HttpClient http = HttpClient.newBuilder()
            .connectTimeout(Duration.ofSeconds(2))
            .version(HttpClient.Version.HTTP_1_1)
            .build();

    Api(List<URI> bases) {
        this.bases = List.copyOf(bases);
        this.inFlight = new AtomicIntegerArray(bases.size());
    }

    /** Told of every POST /jobs answer (the clustered soak's intake figures); none by default. */
    private volatile IntakeListener intake = (status, code) -> {};

    /** Told of each POST /jobs answer: its status (or -1) and its problem's code (null without one). */
    interface IntakeListener {
        void answered(int status, String code);
    }

    /**
     * The listener gets each POST /jobs answer's status, or -1 when no answer came or a 5xx came from a process
     * shutting down (not a problem of ours), with the problem's code.
     */
    void onIntake(IntakeListener listener) {
        this.intake = listener;
    }

    int processes() {
        return bases.size();
    }

    int inFlight(int process) {
        return inFlight.get(process);
    }

    /**
     * Sends one request to api process {@code process}.
     *
     * @param idempotencyKey null for requests without one
     * @param json null for requests without a body
     * @throws IOException when no answer came back (refused, reset, the process died, timeout)
     */
    Answer send(int process, String method, String path, String token, String idempotencyKey, String json)
            throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(bases.get(process).resolve(path))
                .timeout(REQUEST_TIMEOUT)
                .header("Authorization", "Bearer " + token)
                .header("Accept", "application/json")
                .method(
                        method,
                        json == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(json));
        if (json != null) {
            request.header("Content-Type", "application/json");
        }
        if (idempotencyKey != null) {
            request.header("Idempotency-Key", idempotencyKey);
        }
        inFlight.incrementAndGet(process);
        boolean isIntake = method.equals("POST") && path.equals("/jobs");
        try {
            HttpResponse<String> response;
            try {
                response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
            } catch (IOException noAnswer) {
                if (isIntake) {
                    intake.answered(-1, null);
                }
                throw noAnswer;
            }
            JsonNode body;
            try {
                body = response.body().isEmpty() ? MissingNode.getInstance() : JSON.readTree(response.body());
            } catch (IOException notJson) {
                body = MissingNode.getInstance();
            }
            if (isIntake) {
                // A 5xx that is not one of our problems (no code) came from a process stopping (Quarkus answers
                // 503 with no body once its shutdown began): the process was going away, as with no answer.
                boolean application = response.statusCode() < 500
                        || !body.path("code").asText("").isEmpty();
                intake.answered(
                        application ? response.statusCode() : -1,
                        body.path("code").asText(null));
            }
            boolean replayed = response.headers()
                    .firstValue("Idempotent-Replayed")
                    .map("true"::equals)
                    .orElse(false);
            return new Answer(response.statusCode(), body, replayed);
        } finally {
            inFlight.decrementAndGet(process);
        }
    }
}
