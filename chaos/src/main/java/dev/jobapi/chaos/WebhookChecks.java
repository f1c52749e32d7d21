package dev.jobapi.chaos;

import dev.jobapi.chaos.WebhookReceiver.Endpoint;
import dev.jobapi.chaos.WebhookReceiver.Received;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The webhook invariants over what the receivers got, apart from the database: every end of a job of an owner
 * with endpoints answered 2xx at each of them, under one webhook-id, and every request signed. A webhook-id
 * received again is at-least-once delivery (a receiver dedupes by it) and only counted.
 */
final class WebhookChecks {

    private WebhookChecks() {}

    /** A job that ended, completed or cancelled, as the database has it (of any owner). */
    record EndedJob(String id, String owner, String state) {
        /** The event its end sends: job.completed or job.cancelled. */
        String type() {
            return "job." + state;
        }
    }

    /** One endpoint's delivery of one job's event. */
    record Key(String endpointId, String jobId, String type) {}

    record Found(List<String> lost, List<String> twice, List<String> invalid, Map<String, Object> figures) {}

    /**
     * @param rows what {@code webhook_delivery} says of each key (state, tries, last answer), for the lines of a
     *     lost end: a missing row and a row the api gave up on or never finished are different stories
     */
    static Found check(List<Endpoint> endpoints, List<Received> received, List<EndedJob> ended, Map<Key, String> rows) {
        Map<String, Endpoint> byId = new HashMap<>();
        Map<String, List<Endpoint>> byOwner = new TreeMap<>();
        for (Endpoint endpoint : endpoints) {
            byId.put(endpoint.id(), endpoint);
            byOwner.computeIfAbsent(endpoint.owner(), o -> new ArrayList<>()).add(endpoint);
        }

        Map<Key, Set<String>> okIds = new HashMap<>();
        Set<String> ids = new HashSet<>();
        Set<String> answeredOk = new HashSet<>();
        long again = 0;
        long redelivered = 0;
        long failed = 0;
        long slow = 0;
        List<String> invalid = new ArrayList<>();
        for (Received request : received) {
            if (!ids.add(request.endpointId() + " " + request.webhookId())) {
                again++;
            }
            if (answeredOk.contains(request.endpointId() + " " + request.webhookId())) {
                redelivered++;
            }
            if (request.status() == 500) {
                failed++;
            }
            if (request.delayMs() > 0) {
                slow++;
            }
            if (!request.verified()) {
                Endpoint endpoint = byId.get(request.endpointId());
                invalid.add("request " + request.webhookId() + " (" + request.type() + " of job " + request.jobId()
                        + ") at " + (endpoint == null ? "no endpoint" : "endpoint " + name(endpoint)) + ", "
                        + request.at() + ": " + request.problem());
            }
            if (request.answeredOk() && request.endpointId() != null) {
                answeredOk.add(request.endpointId() + " " + request.webhookId());
                okIds.computeIfAbsent(
                                new Key(request.endpointId(), request.jobId(), request.type()), k -> new TreeSet<>())
                        .add(request.webhookId());
            }
        }

        List<String> lost = new ArrayList<>();
        Set<Key> expected = new HashSet<>();
        long endedWatched = 0;
        for (EndedJob job : ended) {
            if (byOwner.containsKey(job.owner())) {
                endedWatched++;
            }
            for (Endpoint endpoint : byOwner.getOrDefault(job.owner(), List.of())) {
                Key key = new Key(endpoint.id(), job.id(), job.type());
                expected.add(key);
                if (!okIds.containsKey(key)) {
                    lost.add("job " + job.id() + " (" + job.owner() + ", " + job.state() + "): " + job.type()
                            + " never answered 2xx at endpoint " + name(endpoint) + "; webhook_delivery: "
                            + rows.getOrDefault(key, "no row"));
                }
            }
        }
        List<String> twice = new ArrayList<>();
        okIds.forEach((key, webhookIds) -> {
            if (webhookIds.size() > 1) {
                twice.add("job " + key.jobId() + ": " + key.type() + " answered 2xx at endpoint "
                        + name(byId.get(key.endpointId())) + " under " + webhookIds.size() + " webhook-ids "
                        + webhookIds);
            }
        });
        twice.sort(null);
        long unexpected =
                okIds.keySet().stream().filter(k -> !expected.contains(k)).count();

        Map<String, Object> figures = new LinkedHashMap<>();
        Map<String, Integer> perOwner = new TreeMap<>();
        byOwner.forEach((owner, list) -> perOwner.put(owner, list.size()));
        figures.put("webhook endpoints (per owner)", perOwner);
        figures.put("webhook requests received", (long) received.size());
        figures.put("distinct webhook-ids received", (long) ids.size());
        figures.put("webhook requests repeating a webhook-id (retries after a 500, timeout or fault)", again);
        figures.put("of them redeliveries of a webhook-id already answered 2xx (at-least-once)", redelivered);
        figures.put("webhook requests answered 500 by the receivers", failed);
        figures.put("webhook requests answered 2-5 s late", slow);
        figures.put("ended jobs of owners with webhook endpoints (completed or cancelled)", endedWatched);
        figures.put("job ends answered 2xx that are no end of the endpoint owner's jobs (should be 0)", unexpected);
        return new Found(lost, twice, invalid, figures);
    }

    private static String name(Endpoint endpoint) {
        return endpoint == null ? "unknown" : endpoint.id() + " (" + endpoint.path() + ")";
    }
}
