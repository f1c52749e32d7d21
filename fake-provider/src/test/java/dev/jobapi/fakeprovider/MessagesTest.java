package dev.jobapi.fakeprovider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The Anthropic Messages route over real HTTP, driven by the same scripts as chat completions. */
class MessagesTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient CLIENT =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final String PATCH = DemoRepository.defaultPatch();
    private static final int PATCH_WORDS = PATCH.strip().split("\\s+").length;

    private FakeProvider fake;

    @BeforeEach
    void startFake() {
        fake = FakeProvider.start(0);
    }

    @AfterEach
    void stopFake() {
        fake.stop();
    }

    @Test
    void streamsMessageStartTextDeltasUsageAndStop() throws Exception {
        HttpResponse<String> response = send(messages("stream the fix", "attempt-1", true), "key-1");

        assertEquals(200, response.statusCode());
        assertEquals(
                "text/event-stream",
                response.headers().firstValue("Content-Type").orElseThrow());
        assertTrue(response.headers().firstValue("request-id").orElseThrow().startsWith("req_"));
        List<String[]> events = events(response.body());
        List<String> types = events.stream().map(e -> e[0]).toList();
        assertEquals("message_start", types.get(0));
        assertEquals("content_block_start", types.get(1));
        assertEquals(
                List.of("content_block_stop", "message_delta", "message_stop"),
                types.subList(types.size() - 3, types.size()));
        JsonNode start = JSON.readTree(events.get(0)[1]).path("message");
        String id = start.path("id").asText();
        assertTrue(id.startsWith("msg_"), id);
        assertEquals(3, start.path("usage").path("input_tokens").asInt(), "three words in the prompt");
        StringBuilder text = new StringBuilder();
        for (String[] event : events) {
            JsonNode data = JSON.readTree(event[1]);
            assertEquals(event[0], data.path("type").asText(), "the event line and the payload's type agree");
            if (event[0].equals("content_block_delta")) {
                text.append(data.path("delta").path("text").asText());
            }
        }
        assertEquals(PATCH, text.toString());
        JsonNode delta = JSON.readTree(events.get(events.size() - 2)[1]);
        assertEquals("end_turn", delta.path("delta").path("stop_reason").asText());
        assertEquals(PATCH_WORDS, delta.path("usage").path("output_tokens").asInt());

        ReceivedRequest logged = fake.requests().get(0);
        assertEquals("/v1/messages", logged.path());
        assertEquals("claude-test", logged.model());
        assertEquals("attempt-1", logged.attemptId(), "taken from metadata.user_id");
        assertEquals("key-1", logged.requestKey());
        assertEquals(id, logged.remoteId());
        assertEquals(new ReceivedRequest.Usage(3, PATCH_WORDS), logged.usage());
    }

    @Test
    void answersAWholeMessageWhenNotStreaming() throws Exception {
        JsonNode message =
                JSON.readTree(send(messages("fix it now", null, false), null).body());

        assertEquals("message", message.path("type").asText());
        assertEquals(PATCH, message.path("content").path(0).path("text").asText());
        assertEquals("end_turn", message.path("stop_reason").asText());
        assertEquals(3, message.path("usage").path("input_tokens").asInt());
        assertEquals(PATCH_WORDS, message.path("usage").path("output_tokens").asInt());
        assertNull(fake.requests().get(0).attemptId());
    }

    @Test
    void followsTheSameScriptsWithAnthropicErrorShapes() throws Exception {
        fake.addScript(Script.of("busy", Step.failing(529), Step.failing(429), Step.failing(500), Step.failing(400)));

        List<String> types = new ArrayList<>();
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            HttpResponse<String> response = send(messages("busy model", "attempt-2", true), "key-2");
            statuses.add(response.statusCode());
            JsonNode body = JSON.readTree(response.body());
            assertEquals("error", body.path("type").asText());
            types.add(body.path("error").path("type").asText());
        }

        assertEquals(List.of(529, 429, 500, 400), statuses);
        assertEquals(List.of("overloaded_error", "rate_limit_error", "api_error", "invalid_request_error"), types);
        assertEquals(4, fake.requests().size());
        assertTrue(fake.requests().stream().allMatch(r -> "key-2".equals(r.requestKey()) && r.usage() == null));
    }

    /** Anthropic always reports usage; missing usage is a stream that breaks before message_delta. */
    @Test
    void missingUsageIsAStreamThatBreaksAfterTheTextBeforeMessageDelta() throws Exception {
        fake.addScript(Script.of("no usage", Step.withoutUsage()));
        HttpResponse<InputStream> response = CLIENT.send(
                post(messages("no usage here", null, true), null), HttpResponse.BodyHandlers.ofInputStream());

        List<String> lines = new ArrayList<>();
        try (BufferedReader reader =
                new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            assertThrows(IOException.class, () -> {
                String line;
                while ((line = reader.readLine()) != null) {
                    lines.add(line);
                }
            });
        }
        List<String> types = lines.stream()
                .filter(line -> line.startsWith("event: "))
                .map(line -> line.substring(7))
                .distinct()
                .toList();
        assertEquals(
                List.of("message_start", "content_block_start", "content_block_delta", "content_block_stop"), types);
        // message_start carries usage as it always does: the input count and a provisional output of 1.
        JsonNode start = JSON.readTree(lines.stream()
                .filter(line -> line.startsWith("data: ") && line.contains("message_start"))
                .findFirst()
                .orElseThrow()
                .substring(6));
        assertEquals(3, start.path("message").path("usage").path("input_tokens").asInt());
        assertEquals(
                1, start.path("message").path("usage").path("output_tokens").asInt());
        assertNull(fake.requests().get(0).usage());
    }

    @Test
    void missingUsageOfAWholeMessageIsABodyThatBreaksOffHalfway() {
        fake.addScript(Script.of("no usage", Step.withoutUsage()));

        assertThrows(IOException.class, () -> send(messages("no usage here", null, false), null));
        assertNull(fake.requests().get(0).usage());
    }

    @Test
    void sendsTheFirstTokenThenAnErrorEventThenBreaksTheConnection() throws Exception {
        fake.addScript(Script.of("fragile", Step.abortingAfterFirstToken()));
        HttpResponse<InputStream> response = CLIENT.send(
                post(messages("a fragile stream", null, true), null), HttpResponse.BodyHandlers.ofInputStream());

        List<String> lines = new ArrayList<>();
        try (BufferedReader reader =
                new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            assertThrows(IOException.class, () -> {
                String line;
                while ((line = reader.readLine()) != null) {
                    lines.add(line);
                }
            });
        }
        List<String> types = lines.stream()
                .filter(line -> line.startsWith("event: "))
                .map(line -> line.substring(7))
                .toList();
        assertEquals(List.of("message_start", "content_block_start", "content_block_delta", "error"), types);
        assertTrue(lines.stream().anyMatch(line -> line.contains("overloaded_error")));
        assertNull(fake.requests().get(0).usage());
    }

    @Test
    void truncatedMessageStopsForMaxTokensWithHalfThePatchAndItsOutputCount() throws Exception {
        fake.addScript(Script.of("cut off", Step.truncatedAtTheOutputLimit()));

        List<String[]> events =
                events(send(messages("cut off", "attempt-t", true), "key-t").body());
        JsonNode whole = JSON.readTree(
                send(messages("cut off", "attempt-t", false), "key-t2").body());

        StringBuilder text = new StringBuilder();
        for (String[] event : events) {
            if (event[0].equals("content_block_delta")) {
                text.append(JSON.readTree(event[1]).path("delta").path("text").asText());
            }
        }
        List<String> lines = PATCH.lines().map(line -> line + "\n").toList();
        String half = String.join("", lines.subList(0, lines.size() / 2));
        assertEquals(half, text.toString());
        JsonNode delta = JSON.readTree(events.get(events.size() - 2)[1]);
        assertEquals("max_tokens", delta.path("delta").path("stop_reason").asText());
        assertEquals(
                half.strip().split("\\s+").length,
                delta.path("usage").path("output_tokens").asInt());
        assertEquals("message_stop", events.get(events.size() - 1)[0]);
        assertEquals("max_tokens", whole.path("stop_reason").asText());
    }

    @Test
    void stallsAnErrorBodyAfterItsHeadersInAnthropicShape() throws Exception {
        fake.addScript(Script.of("hanging error", Step.failing(529).stallingBodyFor(600)));
        long started = System.nanoTime();

        HttpResponse<InputStream> response = CLIENT.send(
                post(messages("hanging error", null, true), null), HttpResponse.BodyHandlers.ofInputStream());
        long headersAfter = (System.nanoTime() - started) / 1_000_000;
        byte[] body;
        try (InputStream in = response.body()) {
            body = in.readAllBytes();
        }

        assertEquals(529, response.statusCode());
        assertTrue(headersAfter < 600, "the headers come at once, took " + headersAfter + "ms");
        assertTrue((System.nanoTime() - started) / 1_000_000 >= 600, "the body comes after the stall");
        assertEquals(
                "overloaded_error",
                JSON.readTree(body).path("error").path("type").asText());
    }

    @Test
    void refusesRequestsWithoutVersionHeaderOrMaxTokensInAnthropicShape() throws Exception {
        HttpRequest noVersion = HttpRequest.newBuilder(uri("/v1/messages"))
                .POST(HttpRequest.BodyPublishers.ofString(messages("x", null, false)))
                .build();
        ObjectNode noMaxTokens = (ObjectNode) JSON.readTree(messages("x", null, false));
        noMaxTokens.remove("max_tokens");

        for (HttpResponse<String> response : List.of(
                CLIENT.send(noVersion, HttpResponse.BodyHandlers.ofString()), send(noMaxTokens.toString(), null))) {
            assertEquals(400, response.statusCode());
            JsonNode body = JSON.readTree(response.body());
            assertEquals("error", body.path("type").asText());
            assertEquals(
                    "invalid_request_error", body.path("error").path("type").asText());
        }
        assertTrue(fake.requests().isEmpty());
    }

    private static String messages(String prompt, String attemptId, boolean stream) {
        ObjectNode body = JSON.createObjectNode();
        body.put("model", "claude-test");
        body.put("max_tokens", 1024);
        body.put("stream", stream);
        body.putArray("messages").addObject().put("role", "user").put("content", prompt);
        if (attemptId != null) {
            body.putObject("metadata").put("user_id", attemptId);
        }
        return body.toString();
    }

    private HttpResponse<String> send(String body, String requestKey) throws IOException, InterruptedException {
        return CLIENT.send(post(body, requestKey), HttpResponse.BodyHandlers.ofString());
    }

    private HttpRequest post(String body, String requestKey) {
        HttpRequest.Builder builder = HttpRequest.newBuilder(uri("/v1/messages"))
                .header("Content-Type", "application/json")
                .header("anthropic-version", "2023-06-01")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (requestKey != null) {
            builder.header("Idempotency-Key", requestKey);
        }
        return builder.build();
    }

    private URI uri(String path) {
        return URI.create(fake.baseUrl() + path);
    }

    /** Each event as {type, data}, from {@code event:} and {@code data:} line pairs. */
    private static List<String[]> events(String stream) {
        List<String[]> events = new ArrayList<>();
        String type = null;
        for (String line : stream.lines().toList()) {
            if (line.startsWith("event: ")) {
                type = line.substring(7);
            } else if (line.startsWith("data: ")) {
                events.add(new String[] {type, line.substring(6)});
            }
        }
        return events;
    }
}
