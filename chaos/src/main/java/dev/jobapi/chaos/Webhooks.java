package dev.jobapi.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The soak's webhook endpoints (issue 34): before the load, every third owner registers endpoints at the
 * {@link WebhookReceiver} for the ends of their jobs (alice two, so one event goes to two endpoints); after the
 * drain the run waits until the api has no delivery left pending, and the checker holds what the receivers got
 * to the jobs that ended.
 */
final class Webhooks {

    /** The events every soak endpoint wants: the ends of a job. */
    static final List<String> EVENTS = List.of("job.completed", "job.cancelled");

    /**
     * After the drain, how long the api gets to deliver what is left: its retries wait 10 s at most, but a
     * delivery a killed api process had taken waits out its lease (the 15 s request timeout and 30 s).
     */
    static final Duration SETTLE_BUDGET = Duration.ofMinutes(3);

    private static final Duration PATIENCE = Duration.ofMinutes(1);
    private static final Duration PROGRESS_EVERY = Duration.ofSeconds(5);

    private final Api api;
    private final DevTokens tokens;
    private final WebhookReceiver receiver;

    Webhooks(Api api, DevTokens tokens, WebhookReceiver receiver) {
        this.api = api;
        this.tokens = tokens;
        this.receiver = receiver;
    }

    /** The endpoints' owners and paths: every third owner of the load, the first of them with two. */
    static Map<String, List<String>> plan() {
        List<String> owners = new ArrayList<>(Load.OWNERS);
        owners.add(Load.LARGE_INPUT_OWNER);
        Map<String, List<String>> paths = new TreeMap<>();
        for (int i = 0; i < owners.size(); i += 3) {
            String owner = owners.get(i);
            int count = i == 0 ? 2 : 1;
            for (int n = 1; n <= count; n++) {
                paths.computeIfAbsent(owner, o -> new ArrayList<>()).add(WebhookReceiver.PATH_PREFIX + owner + "-" + n);
            }
        }
        return paths;
    }

    /** Registers every planned endpoint through the api, as its owner would; returns a line saying which. */
    String register() throws InterruptedException {
        List<String> registered = new ArrayList<>();
        for (var owner : plan().entrySet()) {
            String token = tokens.mint(owner.getKey(), List.of("user"));
            for (String path : owner.getValue()) {
                WebhookReceiver.Endpoint endpoint = register(owner.getKey(), token, path);
                receiver.add(endpoint);
                registered.add(owner.getKey() + " " + receiver.url(path));
            }
        }
        return registered.size() + " webhook endpoints: " + String.join(", ", registered);
    }

    /**
     * POSTs the endpoint, on another process or later, until one answers 201: only that answer carries the
     * secret. A 409 {@code webhook-exists} is an earlier try whose answer was lost: that endpoint is deleted
     * and registered again.
     */
    private WebhookReceiver.Endpoint register(String owner, String token, String path) throws InterruptedException {
        ObjectNode body = Api.JSON
                .createObjectNode()
                .put("url", receiver.url(path))
                .put("description", "chaos soak receiver " + path);
        EVENTS.forEach(body.putArray("events")::add);
        Instant giveUp = Instant.now().plus(PATIENCE);
        String last = "no answer";
        for (int round = 0; Instant.now().isBefore(giveUp); round++) {
            int process = round % api.processes();
            try {
                Api.Answer answer = api.send(process, "POST", "/webhooks", token, null, body.toString());
                if (answer.status() == 201) {
                    return new WebhookReceiver.Endpoint(
                            answer.body().path("id").asText(),
                            owner,
                            path,
                            answer.body().path("secret").asText());
                }
                last = answer.status() + " " + answer.body();
                if (answer.status() == 409 && answer.code().equals("webhook-exists")) {
                    deleteAt(process, token, receiver.url(path));
                    continue;
                }
            } catch (IOException e) {
                last = e.toString();
            }
            Thread.sleep(1_000);
        }
        throw new IllegalStateException("POST /webhooks for " + owner + " " + path + " was not answered 201: " + last);
    }

    /** Deletes the owner's endpoint with this URL, found in their list (GET /webhooks: an array). */
    private void deleteAt(int process, String token, String url) throws IOException, InterruptedException {
        Api.Answer list = api.send(process, "GET", "/webhooks", token, null, null);
        for (JsonNode endpoint : list.body()) {
            if (endpoint.path("url").asText().equals(url)) {
                api.send(process, "DELETE", "/webhooks/" + endpoint.path("id").asText(), token, null, null);
            }
        }
    }

    /**
     * Waits until {@code webhook_delivery} has no pending row, with a progress line every few seconds; returns
     * how long it took, or null when deliveries were still pending after {@code budget} (the checker then names
     * each end that never arrived).
     */
    Duration awaitSettled(Drain.Database database, Duration budget) throws InterruptedException {
        long start = System.nanoTime();
        long lastPrinted = start - PROGRESS_EVERY.toNanos();
        while (true) {
            Map<String, Long> byState = database.read(db -> {
                Map<String, Long> counts = new TreeMap<>();
                try (PreparedStatement statement =
                                db.prepareStatement("SELECT state, count(*) FROM webhook_delivery GROUP BY state");
                        ResultSet rs = statement.executeQuery()) {
                    while (rs.next()) {
                        counts.put(rs.getString(1), rs.getLong(2));
                    }
                }
                return counts;
            });
            long now = System.nanoTime();
            boolean settled = byState.getOrDefault("pending", 0L) == 0;
            if (settled || now - lastPrinted >= PROGRESS_EVERY.toNanos()) {
                System.out.printf(
                        "    webhooks %3ds: deliveries %s, requests received %d%n",
                        Duration.ofNanos(now - start).toSeconds(), byState, receiver.receivedCount());
                lastPrinted = now;
            }
            if (settled) {
                return Duration.ofNanos(now - start);
            }
            if (now - start > budget.toNanos()) {
                return null;
            }
            Thread.sleep(1_000);
        }
    }
}
