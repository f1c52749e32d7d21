package dev.jobapi.fakeprovider;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Signed completion callbacks, received by a plain HTTP server standing in for the job API. */
class CallbacksTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient CLIENT =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final String SECRET = "test-secret";
    private static final String PATCH = "--- a/x\n+++ b/x\n";

    /** What the receiver got: path, signature header, content type, raw body. */
    private record Received(String path, String signature, String contentType, byte[] body) {}

    private final List<Received> received = new CopyOnWriteArrayList<>();
    private FakeProvider fake;
    private HttpServer receiver;

    @BeforeEach
    void start() throws IOException {
        fake = FakeProvider.start(0);
        receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        receiver.createContext("/", exchange -> {
            received.add(new Received(
                    exchange.getRequestURI().getPath(),
                    exchange.getRequestHeaders().getFirst("Jobapi-Signature"),
                    exchange.getRequestHeaders().getFirst("Content-Type"),
                    exchange.getRequestBody().readAllBytes()));
            exchange.sendResponseHeaders(202, -1);
            exchange.close();
        });
        receiver.start();
    }

    @AfterEach
    void stop() {
        fake.stop();
        receiver.stop(0);
    }

    @Test
    void postsTheSignedCompletionToTheProvidersCallbackUrlWhileTheClientHasGivenUp() throws Exception {
        fake.configureCallbacks(receiverUrl(), SECRET);
        fake.addScript(Script.of("late", new Step(null, 2_000, false, false, PATCH).withCallbackAfter(300)));

        long before = Instant.now().getEpochSecond();
        HttpRequest request = HttpRequest.newBuilder(URI.create(fake.baseUrl() + "/v1/chat/completions"))
                .timeout(Duration.ofMillis(500))
                .POST(HttpRequest.BodyPublishers.ofString(chat("fake-a", "late answer", "attempt-9")))
                .build();
        assertThrows(HttpTimeoutException.class, () -> CLIENT.send(request, HttpResponse.BodyHandlers.ofString()));
        await().atMost(Duration.ofSeconds(5)).until(() -> !received.isEmpty());

        Received callback = received.get(0);
        assertEquals("/callbacks/fake-a", callback.path());
        assertEquals("application/json", callback.contentType());
        JsonNode body = JSON.readTree(callback.body());
        assertEquals(List.of("attemptId", "remoteId", "status", "output", "usage"), fieldNames(body));
        assertEquals("attempt-9", body.path("attemptId").asText());
        assertEquals("completed", body.path("status").asText());
        assertEquals(PATCH, body.path("output").asText());
        assertEquals(2, body.path("usage").path("promptTokens").asInt(), "two words in the prompt");
        assertEquals(4, body.path("usage").path("completionTokens").asInt());
        // The signature is recomputed here from its definition, not with the fake's own code.
        String[] parts = callback.signature().split(",");
        long timestamp = Long.parseLong(parts[0].substring("t=".length()));
        assertTrue(timestamp >= before && timestamp <= Instant.now().getEpochSecond());
        assertEquals("v1=" + hmac(timestamp + "." + new String(callback.body(), StandardCharsets.UTF_8)), parts[1]);

        // The late answer carries the id the callback announced.
        await().atMost(Duration.ofSeconds(5)).until(() -> fake.requests().get(0).remoteId() != null);
        assertEquals(fake.requests().get(0).remoteId(), body.path("remoteId").asText());
        CallbackSent sent = fake.callbacks().get(0);
        assertEquals(receiverUrl() + "/callbacks/fake-a", sent.target());
        assertEquals(202, sent.status());
        assertNull(sent.error());
        JsonNode listed = JSON.readTree(get("/fake/callbacks"));
        assertEquals(202, listed.path(0).path("status").asInt());
    }

    @Test
    void leavesUsageOutWhenTheStepOmitsIt() throws Exception {
        fake.configureCallbacks(receiverUrl(), SECRET);
        fake.addScript(Script.of("quiet", Step.withoutUsage().withCallbackAfter(0)));

        CLIENT.send(post(chat("fake-b", "quiet", "attempt-3")), HttpResponse.BodyHandlers.ofString());
        await().atMost(Duration.ofSeconds(5)).until(() -> !received.isEmpty());

        JsonNode body = JSON.readTree(received.get(0).body());
        assertFalse(body.has("usage"), body.toString());
        assertEquals("/callbacks/fake-b", received.get(0).path());
    }

    @Test
    void sendsNoCallbackForFailedOrBrokenAnswers() throws Exception {
        fake.configureCallbacks(receiverUrl(), SECRET);
        fake.addScript(Script.of("refused", Step.failing(503).withCallbackAfter(0)));
        fake.addScript(Script.of("broken", Step.abortingAfterFirstToken().withCallbackAfter(0)));
        fake.addScript(Script.of("fine", Step.ok().withCallbackAfter(0)));

        CLIENT.send(post(chat("fake-a", "refused", "attempt-1")), HttpResponse.BodyHandlers.ofString());
        assertThrows(
                IOException.class,
                () -> CLIENT.send(post(chat("fake-a", "broken", "attempt-2")), HttpResponse.BodyHandlers.ofString()));
        CLIENT.send(post(chat("fake-a", "fine", "attempt-3")), HttpResponse.BodyHandlers.ofString());
        await().atMost(Duration.ofSeconds(5)).until(() -> !fake.callbacks().isEmpty());

        assertEquals(
                List.of("attempt-3"),
                fake.callbacks().stream().map(CallbackSent::attemptId).toList());
    }

    @Test
    void recordsACallbackItCouldNotSendWhenNoneIsConfigured() throws Exception {
        fake.addScript(Script.of("orphan", Step.ok().withCallbackAfter(0)));

        CLIENT.send(post(chat("fake-a", "orphan", "attempt-4")), HttpResponse.BodyHandlers.ofString());
        await().atMost(Duration.ofSeconds(5)).until(() -> !fake.callbacks().isEmpty());

        CallbackSent sent = fake.callbacks().get(0);
        assertNull(sent.target());
        assertNull(sent.status());
        assertTrue(sent.error().contains("no callback base URL"), sent.error());
        assertTrue(received.isEmpty());
    }

    private String receiverUrl() {
        return "http://127.0.0.1:" + receiver.getAddress().getPort();
    }

    private static String chat(String model, String prompt, String attemptId) {
        ObjectNode body = JSON.createObjectNode();
        body.put("model", model);
        body.putArray("messages").addObject().put("role", "user").put("content", prompt);
        body.putObject("metadata").put("attempt_id", attemptId);
        return body.toString();
    }

    private HttpRequest post(String body) {
        return HttpRequest.newBuilder(URI.create(fake.baseUrl() + "/v1/chat/completions"))
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
    }

    private String get(String path) throws IOException, InterruptedException {
        return CLIENT.send(
                        HttpRequest.newBuilder(URI.create(fake.baseUrl() + path))
                                .GET()
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
    }

    private static List<String> fieldNames(JsonNode node) {
        List<String> names = new ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }

    private static String hmac(String signed) throws Exception {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(SECRET.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        return HexFormat.of().formatHex(mac.doFinal(signed.getBytes(StandardCharsets.UTF_8)));
    }
}
