package dev.jobapi.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The provider-outage fault (issue 32; docs/design.md, rule 21): the fake provider answers 503 to every call
 * of the soak's first provider for a minute. Its health gate must open within the minimum of calls and hold
 * the rest (none failed by the outage after that, none dead-lettered), and the held jobs complete after it.
 * What it did is read back when the outage is over: the calls the provider received, the first hold, the
 * holds and probes.
 */
final class ProviderOutage {

    static final Duration LENGTH = Duration.ofSeconds(60);
    static final String PROVIDER = "fake-a";
    private static final int STATUS = 503;
    /** After the outage, the time its last calls and the first probe take to show up. */
    private static final Duration SETTLE = Duration.ofSeconds(10);

    private final URI fake;
    private final Drain.Database database;
    private final HttpClient http = HttpClient.newHttpClient();

    ProviderOutage(URI fake, Drain.Database database) {
        this.fake = fake;
        this.database = database;
    }

    /** Starts the outage, waits it out, and says what the gate did; throws when it never held a call. */
    String inject() throws InterruptedException {
        Instant from = Instant.now();
        start();
        Thread.sleep(LENGTH.plus(SETTLE).toMillis());
        Instant to = from.plus(LENGTH);
        Calls calls = calls(new FakeLog(fake).fetch(), PROVIDER, from, to);
        Holds holds = holds(from, to.plus(SETTLE));
        long beforeHold = holds.first() == null ? calls.sends() : calls.sendsBefore(holds.first());
        String detail = String.format(
                "%s answered %d for %d s: %d sends from %d attempts reached it, %d of them before the first hold%s;"
                        + " %d attempts held %d times, %d probes",
                PROVIDER,
                STATUS,
                LENGTH.toSeconds(),
                calls.sends(),
                calls.attempts(),
                beforeHold,
                holds.first() == null
                        ? ""
                        : String.format(
                                " (+%.1f s)",
                                Duration.between(from, holds.first()).toMillis() / 1000.0),
                holds.attempts(),
                holds.holds(),
                holds.probes());
        if (holds.holds() == 0) {
            throw new IllegalStateException("the breaker never held a call: " + detail);
        }
        return detail;
    }

    private void start() {
        String body = String.format(
                "{\"status\": %d, \"forMs\": %d, \"model\": \"%s\"}", STATUS, LENGTH.toMillis(), PROVIDER);
        try {
            HttpResponse<String> response = http.send(
                    HttpRequest.newBuilder(fake.resolve("/fake/outage"))
                            .timeout(Duration.ofSeconds(10))
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(body))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 204) {
                throw new IllegalStateException(
                        "fake provider refused the outage: " + response.statusCode() + " " + response.body());
            }
        } catch (IOException e) {
            throw new IllegalStateException("fake provider unreachable: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted starting the outage", e);
        }
    }

    /**
     * The requests for {@code model} (the soak's providers are named by their model) received in [from, to):
     * the sends, and the attempts they came from.
     */
    record Calls(long sends, long attempts, List<Instant> at) {
        long sendsBefore(Instant instant) {
            return at.stream().filter(t -> t.isBefore(instant)).count();
        }
    }

    static Calls calls(JsonNode log, String model, Instant from, Instant to) {
        List<Instant> at = new ArrayList<>();
        Set<String> attempts = new HashSet<>();
        for (JsonNode request : log) {
            if (!model.equals(request.path("model").asText())) {
                continue;
            }
            Instant received = Instant.parse(request.path("receivedAt").asText());
            if (!received.isBefore(from) && received.isBefore(to)) {
                at.add(received);
                if (request.hasNonNull("attemptId")) {
                    attempts.add(request.get("attemptId").asText());
                }
            }
        }
        return new Calls(at.size(), attempts.size(), at);
    }

    /** The gate's holds of the provider's attempts in [from, to): the first, how many, of how many attempts, probes. */
    record Holds(Instant first, long holds, long attempts, long probes) {}

    private Holds holds(Instant from, Instant to) throws InterruptedException {
        return database.read(db -> {
            try (PreparedStatement query =
                    db.prepareStatement("SELECT min(e.at) FILTER (WHERE e.kind = 'attempt.held'),"
                            + " count(*) FILTER (WHERE e.kind = 'attempt.held'),"
                            + " count(DISTINCT e.attempt_id) FILTER (WHERE e.kind = 'attempt.held'),"
                            + " count(*) FILTER (WHERE e.kind = 'attempt.claimed' AND e.detail LIKE '%the probe of%')"
                            + " FROM job_event e JOIN attempt a ON a.id = e.attempt_id"
                            + " WHERE a.provider = ? AND e.at >= ? AND e.at < ?"
                            + " AND e.kind IN ('attempt.held', 'attempt.claimed')")) {
                query.setString(1, PROVIDER);
                query.setTimestamp(2, Timestamp.from(from));
                query.setTimestamp(3, Timestamp.from(to));
                try (ResultSet row = query.executeQuery()) {
                    row.next();
                    Timestamp first = row.getTimestamp(1);
                    return new Holds(
                            first == null ? null : first.toInstant(), row.getLong(2), row.getLong(3), row.getLong(4));
                }
            }
        });
    }
}
