package dev.jobapi.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The soak's webhook receivers: one HTTP server in the driver's process on 127.0.0.1 (a free port the system
 * picks), one path per registered endpoint. Every request is verified as a Standard Webhooks receiver verifies
 * it and recorded with the answer it got. A fifth of the requests, drawn from the seed, is answered 500, and
 * one in twenty only after a few seconds, so the api's retries and its redeliveries of one webhook-id run under
 * the soak's faults.
 */
final class WebhookReceiver implements AutoCloseable {

    /** An endpoint the soak registered: the api's id, its owner, the receiver's path for it, its secret. */
    record Endpoint(String id, String owner, String path, String secret) {}

    /**
     * One request a receiver got.
     *
     * @param endpointId null when the path is no registered endpoint's
     * @param problem why it did not verify; null when it did
     * @param status the answer given, or -1 when the sender hung up before it was written
     */
    record Received(
            String endpointId,
            String webhookId,
            String type,
            String jobId,
            Long eventId,
            String problem,
            int status,
            long delayMs,
            String at) {

        boolean verified() {
            return problem == null;
        }

        boolean answeredOk() {
            return status >= 200 && status < 300;
        }
    }

    /** What the receivers saw, as written to and read from {@code webhooks.json} for {@code chaos/run check}. */
    record Log(List<Endpoint> endpoints, List<Received> received) {

        void save(Path file) throws IOException {
            Api.JSON.writerWithDefaultPrettyPrinter().writeValue(file.toFile(), this);
        }

        static Log load(Path file) throws IOException {
            return Api.JSON.readValue(file.toFile(), Log.class);
        }
    }

    static final String PATH_PREFIX = "/chaos-webhooks/";
    private static final String SECRET_PREFIX = "whsec_";
    private static final int FAILING_PERCENT = 20;
    private static final int SLOW_PERCENT = 5;
    /** A slow answer takes 2-5 s: well under the api's 15 s request timeout, so it is slow, not lost. */
    private static final int SLOW_FROM_MS = 2_000;

    private static final int SLOWEST_MS = 5_000;
    /**
     * Standard Webhooks' receivers refuse a timestamp further than this from their clock (a replayed message),
     * so a retry must carry the time of its own try.
     */
    static final Duration TIMESTAMP_TOLERANCE = Duration.ofMinutes(5);

    private final HttpServer server;
    // Slow answers hold a thread for seconds: enough threads that the others are answered meanwhile.
    private final ExecutorService threads = Executors.newFixedThreadPool(32);
    private final Random random;
    private final Map<String, Endpoint> byPath = new ConcurrentHashMap<>();
    private final List<Received> received = new ArrayList<>();

    WebhookReceiver(long seed) throws IOException {
        this.random = new Random(seed ^ 0x5EB400CL);
        this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        server.createContext(PATH_PREFIX, this::receive);
        server.setExecutor(threads);
        server.start();
    }

    /** The URL an endpoint at {@code path} (under {@link #PATH_PREFIX}) registers. */
    String url(String path) {
        return "http://127.0.0.1:" + server.getAddress().getPort() + path;
    }

    /** From now on requests to the endpoint's path are verified with its secret. */
    void add(Endpoint endpoint) {
        byPath.put(endpoint.path(), endpoint);
    }

    synchronized Log log() {
        List<Endpoint> endpoints = new ArrayList<>(byPath.values());
        endpoints.sort(Comparator.comparing(Endpoint::path));
        return new Log(endpoints, List.copyOf(received));
    }

    synchronized int receivedCount() {
        return received.size();
    }

    private void receive(HttpExchange exchange) throws IOException {
        Instant at = Instant.now();
        byte[] body;
        try (InputStream in = exchange.getRequestBody()) {
            body = in.readAllBytes();
        }
        Endpoint endpoint = byPath.get(exchange.getRequestURI().getPath());
        String webhookId = exchange.getRequestHeaders().getFirst("webhook-id");
        String problem = endpoint == null
                ? "no endpoint is registered at " + exchange.getRequestURI().getPath()
                : problem(
                        endpoint.secret(),
                        webhookId,
                        exchange.getRequestHeaders().getFirst("webhook-timestamp"),
                        body,
                        exchange.getRequestHeaders().getFirst("webhook-signature"),
                        at);
        JsonNode payload;
        try {
            payload = Api.JSON.readTree(body);
        } catch (IOException notJson) {
            payload = Api.JSON.missingNode();
            problem = problem == null ? "the body is not JSON" : problem;
        }
        int status;
        long delayMs;
        // One draw per request, in arrival order: the share of failures and slow answers is the seed's.
        synchronized (random) {
            status = random.nextInt(100) < FAILING_PERCENT ? 500 : 204;
            delayMs = random.nextInt(100) < SLOW_PERCENT ? SLOW_FROM_MS + random.nextInt(SLOWEST_MS - SLOW_FROM_MS) : 0;
        }
        // The planned answer whether or not the request verified: a bad signature is its own violation, and
        // refusing it would make the api retry it until the end of the run.
        int answered = status;
        try {
            if (delayMs > 0) {
                Thread.sleep(delayMs);
            }
            exchange.sendResponseHeaders(status, -1);
        } catch (IOException hungUp) {
            answered = -1;
        } catch (InterruptedException closing) {
            answered = -1;
            Thread.currentThread().interrupt();
        } finally {
            exchange.close();
        }
        JsonNode data = payload.path("data");
        synchronized (this) {
            received.add(new Received(
                    endpoint == null ? null : endpoint.id(),
                    webhookId,
                    payload.path("type").asText(null),
                    data.path("jobId").asText(null),
                    data.path("eventId").isIntegralNumber()
                            ? data.path("eventId").asLong()
                            : null,
                    problem,
                    answered,
                    delayMs,
                    at.toString()));
        }
    }

    /**
     * Why a request does not verify under Standard Webhooks, or null when it does: the id, timestamp and
     * signature headers present, the timestamp within {@link #TIMESTAMP_TOLERANCE} of {@code now}, and one of
     * the signatures listed {@link #signedBy signed by the secret}.
     */
    static String problem(
            String secret, String webhookId, String timestamp, byte[] body, String signatures, Instant now) {
        if (webhookId == null || timestamp == null || signatures == null) {
            return "webhook-id, webhook-timestamp or webhook-signature missing";
        }
        long seconds;
        try {
            seconds = Long.parseLong(timestamp.strip());
        } catch (NumberFormatException e) {
            return "webhook-timestamp " + timestamp + " is not unix seconds";
        }
        long off = Math.abs(now.getEpochSecond() - seconds);
        if (off > TIMESTAMP_TOLERANCE.toSeconds()) {
            return "webhook-timestamp " + seconds + " is " + off + " s from the receiver's clock";
        }
        return signedBy(secret, webhookId, timestamp.strip(), body, signatures)
                ? null
                : "no signature in \"" + signatures + "\" is the secret's";
    }

    /**
     * Whether any {@code v1,} entry of the space-separated {@code webhook-signature} header is the base64
     * HMAC-SHA256 of {@code "<webhook-id>.<webhook-timestamp>.<body>"} keyed with the secret's bytes (the
     * base64 after {@code whsec_}). Compared in constant time.
     */
    static boolean signedBy(String secret, String webhookId, String timestamp, byte[] body, String signatures) {
        byte[] expected;
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(
                    Base64.getDecoder().decode(secret.substring(SECRET_PREFIX.length())), "HmacSHA256"));
            mac.update((webhookId + "." + timestamp + ".").getBytes(StandardCharsets.UTF_8));
            expected = mac.doFinal(body);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
        }
        boolean matched = false;
        for (String entry : signatures.strip().split(" +")) {
            if (!entry.startsWith("v1,")) {
                continue;
            }
            byte[] given;
            try {
                given = Base64.getDecoder().decode(entry.substring(3));
            } catch (IllegalArgumentException notBase64) {
                continue;
            }
            // Every entry is compared, so the time taken does not tell which one matched.
            matched |= MessageDigest.isEqual(expected, given);
        }
        return matched;
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
    }
}
