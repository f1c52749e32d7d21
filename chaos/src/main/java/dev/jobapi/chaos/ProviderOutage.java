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
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The provider-outage fault (issue 32; docs/design.md, rule 21): the fake provider answers 503 to every call
 * of the soak's first provider for a minute. Its health gate must open within the minimum of calls and hold
 * the rest (none failed by the outage after that, none dead-lettered), and the held jobs complete after it.
 * What it did is read back when the outage is over: the calls the provider received, the first hold, the
 * holds and probes.
 *
 * <p>The breaker judges a window only once it holds its minimum of calls. On a crowded machine, with a
 * rollout and a broker restart under way, the pipeline can bring the provider far fewer: CI on 2026-12-06
 * saw 8 attempts in the whole minute, and the check failed on a breaker that had, by its own rule, nothing
 * to judge. So the outage goes on, {@link #EXTENSION} at a time and for at most {@link #LONGEST}, until the
 * breaker held a call or a window-long stretch of it brought the provider twice the minimum of attempts: one
 * of the breaker's windows (they follow one another, so a stretch overlaps at most two) then held the minimum.
 */
final class ProviderOutage {

    static final Duration LENGTH = Duration.ofSeconds(60);
    static final Duration LONGEST = Duration.ofSeconds(180);
    private static final Duration EXTENSION = Duration.ofSeconds(20);
    /** An extension is asked for this long before the outage would end, so no call slips between the two. */
    private static final Duration OVERLAP = Duration.ofSeconds(3);

    static final String PROVIDER = "fake-a";
    private static final int STATUS = 503;
    /** After the outage, the time its last calls and the first probe take to show up. */
    private static final Duration SETTLE = Duration.ofSeconds(10);

    private final URI fake;
    private final Drain.Database database;
    /** The breaker's minimum of calls in a window, and its window: the workers' settings in the soak. */
    private final int minimumCalls;

    private final Duration window;
    private final HttpClient http = HttpClient.newHttpClient();

    ProviderOutage(URI fake, Drain.Database database, int minimumCalls, Duration window) {
        this.fake = fake;
        this.database = database;
        this.minimumCalls = minimumCalls;
        this.window = window;
    }

    /**
     * Starts the outage, waits it out (extended until the breaker had calls enough to judge, see above), and
     * says what the gate did; throws when it never held a call.
     */
    String inject() throws InterruptedException {
        Instant from = Instant.now();
        Instant until = from.plus(LENGTH);
        startUntil(until);
        sleepUntil(until.minus(OVERLAP));
        // Once the breaker holds, calls stop reaching the provider: a hold ends the waiting too.
        int busiest;
        while ((busiest = busiestStretch(sentTo(from, until).firstSends(), window)) < 2 * minimumCalls
                && holds(from, until).holds() == 0
                && until.isBefore(from.plus(LONGEST))) {
            until = until.plus(EXTENSION);
            startUntil(until);
            sleepUntil(until.minus(OVERLAP));
        }
        sleepUntil(until.plus(SETTLE));
        Calls calls = sentTo(from, until);
        Holds holds = holds(from, until.plus(SETTLE));
        long beforeHold = holds.first() == null ? calls.sends() : calls.sendsBefore(holds.first());
        String detail = String.format(
                "%s answered %d for %d s: %d sends from %d attempts reached it, at most %d attempts in %d s,"
                        + " %d of the sends before the first hold%s; %d attempts held %d times, %d probes",
                PROVIDER,
                STATUS,
                Duration.between(from, until).toSeconds(),
                calls.sends(),
                calls.attempts(),
                busiest,
                window.toSeconds(),
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

    /**
     * The most attempts whose first send reached the provider within one {@code window}: {@code firstSends}
     * sorted, the widest run of them less than a window apart from its first.
     */
    static int busiestStretch(List<Instant> firstSends, Duration window) {
        int busiest = 0;
        int first = 0;
        for (int last = 0; last < firstSends.size(); last++) {
            while (!firstSends.get(first).plus(window).isAfter(firstSends.get(last))) {
                first++;
            }
            busiest = Math.max(busiest, last - first + 1);
        }
        return busiest;
    }

    /** What the fake provider's log says reached the provider in [from, to). */
    private Calls sentTo(Instant from, Instant to) {
        return calls(new FakeLog(fake).fetch(), PROVIDER, from, to);
    }

    private static void sleepUntil(Instant instant) throws InterruptedException {
        long millis = Duration.between(Instant.now(), instant).toMillis();
        if (millis > 0) {
            Thread.sleep(millis);
        }
    }

    /** Starts the outage, or moves its end: every call of the provider is answered {@link #STATUS} until then. */
    private void startUntil(Instant until) {
        String body = String.format(
                "{\"status\": %d, \"forMs\": %d, \"model\": \"%s\"}",
                STATUS, Duration.between(Instant.now(), until).toMillis(), PROVIDER);
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
     * when each was received, and each attempt's first send.
     */
    record Calls(List<Instant> at, Map<String, Instant> firstSendOfAttempt) {
        long sends() {
            return at.size();
        }

        long attempts() {
            return firstSendOfAttempt.size();
        }

        long sendsBefore(Instant instant) {
            return at.stream().filter(t -> t.isBefore(instant)).count();
        }

        /** Each attempt's first send, in order. */
        List<Instant> firstSends() {
            return firstSendOfAttempt.values().stream().sorted().toList();
        }
    }

    static Calls calls(JsonNode log, String model, Instant from, Instant to) {
        List<Instant> at = new ArrayList<>();
        Map<String, Instant> firstSends = new HashMap<>();
        for (JsonNode request : log) {
            if (!model.equals(request.path("model").asText())) {
                continue;
            }
            Instant received = Instant.parse(request.path("receivedAt").asText());
            if (!received.isBefore(from) && received.isBefore(to)) {
                at.add(received);
                if (request.hasNonNull("attemptId")) {
                    firstSends.merge(request.get("attemptId").asText(), received, (a, b) -> a.isBefore(b) ? a : b);
                }
            }
        }
        return new Calls(at, firstSends);
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
