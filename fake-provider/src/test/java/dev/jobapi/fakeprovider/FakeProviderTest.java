package dev.jobapi.fakeprovider;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
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
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Drives the fake provider over real HTTP with the JDK client, as the services' provider adapters will. */
class FakeProviderTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient CLIENT =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final String PATCH = DemoRepository.defaultPatch();
    private static final long STALL_MS = 600;

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
    void answersWithTheDemoPatchAndUsageWhenNoScriptMatches() throws Exception {
        HttpResponse<String> response = send(chat("please fix the counter", null, false));

        assertEquals(200, response.statusCode());
        JsonNode body = JSON.readTree(response.body());
        String id = body.path("id").asText();
        assertTrue(id.startsWith("chatcmpl-"), id);
        assertEquals(id, response.headers().firstValue("x-request-id").orElseThrow());
        assertEquals("chat.completion", body.path("object").asText());
        assertEquals("gpt-test", body.path("model").asText());
        JsonNode choice = body.path("choices").path(0);
        assertEquals("assistant", choice.path("message").path("role").asText());
        assertEquals(PATCH, choice.path("message").path("content").asText());
        assertEquals("stop", choice.path("finish_reason").asText());
        // In OpenAI's schema and null unless asked for: present, so a strict client finds what it expects.
        assertTrue(choice.has("logprobs") && choice.path("logprobs").isNull());
        assertTrue(choice.path("message").has("refusal")
                && choice.path("message").path("refusal").isNull());
        // "please fix the counter" is four words; the patch's word count is what the log must report too.
        int completionWords = PATCH.strip().split("\\s+").length;
        assertEquals(4, body.path("usage").path("prompt_tokens").asInt());
        assertEquals(
                completionWords, body.path("usage").path("completion_tokens").asInt());
        assertEquals(
                4 + completionWords, body.path("usage").path("total_tokens").asInt());

        ReceivedRequest logged = fake.requests().get(0);
        assertNull(logged.step());
        assertEquals(200, logged.status());
        assertEquals(id, logged.remoteId());
        assertEquals(new ReceivedRequest.Usage(4, completionWords), logged.usage());
    }

    @Test
    void retriesScriptedStatusesThenRepeatsLastStep() throws Exception {
        fake.addScript(Script.of("flaky", Step.failing(502), Step.failing(502), Step.ok()));

        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            statuses.add(send(chat("a flaky request", null, false)).statusCode());
        }
        HttpResponse<String> unscripted = send(chat("an unrelated request", null, false));

        assertEquals(List.of(502, 502, 200, 200), statuses);
        assertEquals(200, unscripted.statusCode());
        assertEquals(
                List.of(502, 502, 200, 200, 200),
                fake.requests().stream().map(ReceivedRequest::status).collect(Collectors.toList()));
        assertEquals(Step.failing(502), fake.requests().get(0).step());
        assertNull(fake.requests().get(4).step(), "the unrelated request got the default answer");
    }

    @Test
    void answersErrorStatusesInOpenAiShapeAndStoresNothing() throws Exception {
        fake.addScript(Script.of("limited", Step.failing(429)));
        fake.addScript(Script.of("broken", Step.failing(503)));
        fake.addScript(Script.of("refused", Step.failing(400)));

        HttpResponse<String> limited = send(chat("limited", "attempt-e", false));
        HttpResponse<String> broken = send(chat("broken", "attempt-e", false));
        HttpResponse<String> refused = send(chat("refused", "attempt-e", false));

        assertEquals(429, limited.statusCode());
        assertEquals("rate_limit_exceeded", error(limited).path("type").asText());
        assertEquals(503, broken.statusCode());
        assertEquals("server_error", error(broken).path("type").asText());
        assertEquals(400, refused.statusCode());
        assertEquals("invalid_request_error", error(refused).path("type").asText());
        assertTrue(listByAttempt("attempt-e").isEmpty(), "failed answers are never stored");
        assertTrue(fake.requests().stream().allMatch(r -> r.remoteId() == null && r.usage() == null));
    }

    @Test
    void anOutageAnswersEveryRequestOfItsModelWithItsStatusUntilItEndsAndLeavesTheScriptsAlone() throws Exception {
        fake.addScript(Script.of("scripted", Step.failing(429), Step.ok()));
        HttpResponse<String> started = CLIENT.send(
                post("/fake/outage", "{\"status\": 503, \"forMs\": 60000, \"model\": \"gpt-test\"}"), ofString());
        assertEquals(204, started.statusCode());

        assertEquals(503, send(chat("scripted", null, false)).statusCode());
        assertEquals(503, send(chat("another request", null, false)).statusCode());
        assertEquals(
                200,
                send(chat("another request", null, false).replace("gpt-test", "other-model"))
                        .statusCode());
        assertEquals(Step.failing(503), fake.requests().get(0).step());

        fake.endOutage();
        assertEquals(429, send(chat("scripted", null, false)).statusCode(), "the script's first step is still next");
        assertEquals(
                400,
                CLIENT.send(post("/fake/outage", "{\"status\": 200, \"forMs\": 1000}"), ofString())
                        .statusCode());
    }

    @Test
    void aStepsHeadersAreSentWithItsAnswer() throws Exception {
        fake.addScript(Script.of("limited", Step.failing(429).withHeader("retry-after", "7")));

        HttpResponse<String> response = send(chat("limited", null, false));

        assertEquals(429, response.statusCode());
        assertEquals("7", response.headers().firstValue("retry-after").orElseThrow());
    }

    @Test
    void firstAddedMatchingScriptWins() throws Exception {
        fake.addScript(Script.of("counter", Step.failing(500)));
        fake.addScript(Script.of("fix the counter", Step.failing(429)));

        assertEquals(500, send(chat("fix the counter", null, false)).statusCode());
    }

    @Test
    void storesLateCompletionAfterClientTimesOut() throws Exception {
        fake.addScript(Script.of("slow", Step.delayed(1_500)));
        HttpRequest request = HttpRequest.newBuilder(chatUri())
                .timeout(Duration.ofMillis(300))
                .POST(HttpRequest.BodyPublishers.ofString(chat("a slow request", "attempt-late", false)))
                .build();

        // ofInputStream returns as soon as the status line arrives, so the timeout proves that not even the status
        // line was sent before the delay.
        assertThrows(HttpTimeoutException.class, () -> CLIENT.send(request, HttpResponse.BodyHandlers.ofInputStream()));
        // The client never saw the id; the provider's log is the only place to learn it.
        await().atMost(Duration.ofSeconds(10))
                .until(() -> fake.requests().get(0).remoteId() != null);
        String remoteId = fake.requests().get(0).remoteId();
        HttpResponse<String> stored = get("/v1/chat/completions/" + remoteId);

        assertEquals(200, stored.statusCode());
        JsonNode completion = JSON.readTree(stored.body());
        assertEquals(remoteId, completion.path("id").asText());
        assertEquals(
                PATCH,
                completion
                        .path("choices")
                        .path(0)
                        .path("message")
                        .path("content")
                        .asText());
        assertEquals(
                "attempt-late", completion.path("metadata").path("attempt_id").asText());
        assertEquals(200, fake.requests().get(0).status());
    }

    @Test
    void delayedRequestDoesNotHoldUpOthers() throws Exception {
        fake.addScript(Script.of("slow", Step.delayed(2_000)));
        CompletableFuture<HttpResponse<String>> slow = CLIENT.sendAsync(
                post("/v1/chat/completions", chat("a slow request", null, false)),
                HttpResponse.BodyHandlers.ofString());
        await().atMost(Duration.ofSeconds(5)).until(() -> !fake.requests().isEmpty());

        HttpResponse<String> quick = send(chat("a quick request", null, false));

        assertEquals(200, quick.statusCode());
        assertFalse(slow.isDone(), "the quick answer came while the slow one was still sleeping");
        assertEquals(200, slow.get().statusCode());
    }

    @Test
    void streamsPatchInChunksThenUsageAndDone() throws Exception {
        HttpResponse<String> response = send(chat("stream it", null, true));

        assertEquals(200, response.statusCode());
        assertEquals(
                "text/event-stream",
                response.headers().firstValue("Content-Type").orElseThrow());
        List<String> events = events(response.body());
        assertEquals("[DONE]", events.get(events.size() - 1));
        JsonNode usageChunk = JSON.readTree(events.get(events.size() - 2));
        assertTrue(usageChunk.path("choices").isArray()
                && usageChunk.path("choices").isEmpty());
        assertEquals(2, usageChunk.path("usage").path("prompt_tokens").asInt());
        List<JsonNode> chunks = new ArrayList<>();
        for (String event : events.subList(0, events.size() - 2)) {
            chunks.add(JSON.readTree(event));
        }
        assertTrue(chunks.size() > 2, "the patch arrives in several pieces");
        StringBuilder content = new StringBuilder();
        for (JsonNode chunk : chunks) {
            assertEquals("chat.completion.chunk", chunk.path("object").asText());
            assertTrue(chunk.path("choices").path(0).has("logprobs"), chunk.toString());
            assertEquals(usageChunk.path("id").asText(), chunk.path("id").asText());
            content.append(
                    chunk.path("choices").path(0).path("delta").path("content").asText(""));
        }
        assertEquals(PATCH, content.toString());
        JsonNode firstDelta = chunks.get(0).path("choices").path(0).path("delta");
        assertTrue(firstDelta.has("refusal") && firstDelta.path("refusal").isNull(), firstDelta.toString());
        assertEquals(
                "stop",
                chunks.get(chunks.size() - 1)
                        .path("choices")
                        .path(0)
                        .path("finish_reason")
                        .asText());
        String id = usageChunk.path("id").asText();
        assertEquals(200, get("/v1/chat/completions/" + id).statusCode(), "a finished stream is stored");
        assertTrue(fake.requests().get(0).stream());
    }

    /**
     * An answer with no stall scripted is the whole answer at once (the bench's provider "answering at
     * once"): one chunk of the chunked body, not one a token. Written a token at a time, each write
     * after the first also waited for the client's delayed ACK on a kept-alive connection.
     */
    @Test
    void anAnswerWithNoStallIsWrittenAsOneChunk() throws Exception {
        String body = chat("all at once", null, true);
        List<String> chunks = new ArrayList<>();
        try (Socket socket = new Socket("127.0.0.1", fake.port())) {
            socket.getOutputStream()
                    .write(("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                    + "Content-Type: application/json\r\nConnection: close\r\nContent-Length: "
                                    + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body)
                            .getBytes(StandardCharsets.UTF_8));
            BufferedReader reader =
                    new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.ISO_8859_1));
            assertEquals("HTTP/1.1 200 OK", reader.readLine());
            while (!reader.readLine().isEmpty()) {
                // the response's headers
            }
            for (int size = Integer.parseInt(reader.readLine().strip(), 16);
                    size > 0;
                    size = Integer.parseInt(reader.readLine().strip(), 16)) {
                char[] chunk = new char[size];
                for (int read = 0; read < size; ) {
                    int more = reader.read(chunk, read, size - read);
                    assertTrue(more > 0, "the body ended inside a chunk");
                    read += more;
                }
                chunks.add(new String(chunk));
                assertEquals("", reader.readLine(), "the chunk's closing line break");
            }
        }

        assertEquals(1, chunks.size(), "chunks: " + chunks);
        List<String> events = events(chunks.get(0));
        assertTrue(events.size() > 3, "the chunk holds the whole stream: " + events);
        assertEquals("[DONE]", events.get(events.size() - 1));
    }

    @Test
    void stallsAnErrorBodyAfterItsHeaders() throws Exception {
        fake.addScript(Script.of("hanging error", Step.failing(500).stallingBodyFor(STALL_MS)));
        long started = System.nanoTime();

        HttpResponse<InputStream> response = CLIENT.send(
                post("/v1/chat/completions", chat("hanging error", null, true)),
                HttpResponse.BodyHandlers.ofInputStream());
        long headersAfter = millisSince(started);
        byte[] body;
        try (InputStream in = response.body()) {
            body = in.readAllBytes();
        }

        assertEquals(500, response.statusCode());
        assertTrue(headersAfter < STALL_MS, "the headers come at once, took " + headersAfter + "ms");
        assertTrue(millisSince(started) >= STALL_MS, "the body comes after the stall");
        assertEquals(
                "server_error", JSON.readTree(body).path("error").path("type").asText());
    }

    @Test
    void stallsAStreamAfterTheFirstTokenThenFinishesIt() throws Exception {
        fake.addScript(Script.of("hanging stream", Step.ok().stallingBodyFor(STALL_MS)));
        long started = System.nanoTime();
        HttpResponse<InputStream> response = CLIENT.send(
                post("/v1/chat/completions", chat("hanging stream", null, true)),
                HttpResponse.BodyHandlers.ofInputStream());

        try (BufferedReader reader =
                new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            String first = reader.readLine();
            assertTrue(first.startsWith("data: "), first);
            assertTrue(millisSince(started) < STALL_MS, "the first token comes before the stall");
            String rest = reader.lines().collect(Collectors.joining("\n"));
            assertTrue(millisSince(started) >= STALL_MS, "the rest comes after it");
            assertTrue(rest.strip().endsWith("data: [DONE]"), rest);
        }
        String id = fake.requests().get(0).remoteId();
        started = System.nanoTime();
        assertEquals(200, get("/v1/chat/completions/" + id).statusCode());
        assertTrue(millisSince(started) >= STALL_MS, "reading the stored answer back stalls too");
    }

    @Test
    void truncatedAnswerEndsForLengthWithHalfThePatchAndItsUsage() throws Exception {
        fake.addScript(Script.of("cut off", Step.truncatedAtTheOutputLimit()));

        List<String> events = events(send(chat("cut off", "attempt-t", true)).body());
        HttpResponse<String> whole = send(chat("cut off", "attempt-t", false));

        List<String> lines = PATCH.lines().map(line -> line + "\n").toList();
        String half = String.join("", lines.subList(0, lines.size() / 2));
        StringBuilder content = new StringBuilder();
        String finish = null;
        for (String event : events.subList(0, events.size() - 1)) {
            JsonNode choice = JSON.readTree(event).path("choices").path(0);
            content.append(choice.path("delta").path("content").asText(""));
            finish = choice.path("finish_reason").isTextual()
                    ? choice.path("finish_reason").asText()
                    : finish;
        }
        assertEquals(half, content.toString());
        assertEquals("length", finish);
        JsonNode usage = JSON.readTree(events.get(events.size() - 2)).path("usage");
        assertEquals(
                half.strip().split("\\s+").length,
                usage.path("completion_tokens").asInt());
        JsonNode completion = JSON.readTree(whole.body()).path("choices").path(0);
        assertEquals("length", completion.path("finish_reason").asText());
        assertEquals(half, completion.path("message").path("content").asText());
    }

    @Test
    void breaksStreamAfterFirstToken() throws Exception {
        fake.addScript(Script.of("fragile", Step.abortingAfterFirstToken()));
        HttpResponse<InputStream> response = CLIENT.send(
                post("/v1/chat/completions", chat("a fragile stream", null, true)),
                HttpResponse.BodyHandlers.ofInputStream());

        assertEquals(200, response.statusCode());
        try (BufferedReader reader =
                new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            String first = reader.readLine();
            assertTrue(first.startsWith("data: "), first);
            JsonNode chunk = JSON.readTree(first.substring("data: ".length()));
            assertEquals(
                    PATCH.lines().findFirst().orElseThrow() + "\n",
                    chunk.path("choices").path(0).path("delta").path("content").asText());
            assertThrows(IOException.class, () -> {
                while (reader.readLine() != null) {
                    // Draining: a clean end of stream here would mean the break looked like a complete answer.
                }
            });
        }
        ReceivedRequest logged = fake.requests().get(0);
        assertNotNull(logged.remoteId(), "the id went out with the first chunk");
        assertNull(logged.usage(), "the usage chunk was never reached");
        assertEquals(404, get("/v1/chat/completions/" + logged.remoteId()).statusCode());
    }

    @Test
    void truncatesNonStreamingBodyWhenAborting() {
        fake.addScript(Script.of("fragile", Step.abortingAfterFirstToken()));

        assertThrows(IOException.class, () -> send(chat("a fragile answer", null, false)));
        assertEquals(200, fake.requests().get(0).status());
        assertNull(fake.requests().get(0).usage());
    }

    @Test
    void omitsUsageWhenScripted() throws Exception {
        fake.addScript(Script.of("no usage", Step.withoutUsage()));

        JsonNode body = JSON.readTree(send(chat("no usage please", null, false)).body());
        List<String> events =
                events(send(chat("no usage in the stream", null, true)).body());

        assertFalse(body.has("usage"), body.toString());
        assertEquals(
                PATCH,
                body.path("choices").path(0).path("message").path("content").asText());
        assertEquals("[DONE]", events.get(events.size() - 1));
        assertTrue(events.stream().noneMatch(event -> event.contains("\"usage\"")), events.toString());
        assertTrue(fake.requests().stream().allMatch(r -> r.usage() == null && r.status() == 200));
    }

    @Test
    void recordsAttemptIdAndIdempotencyKey() throws Exception {
        HttpRequest request = HttpRequest.newBuilder(chatUri())
                .header("Idempotency-Key", "key-42")
                .POST(HttpRequest.BodyPublishers.ofString(chat("with ids", "attempt-7", false)))
                .build();
        CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
        send(chat("without ids", null, false));

        String body = get("/fake/requests").body();
        JsonNode logged = JSON.readTree(body);

        assertEquals(2, logged.size());
        assertEquals("attempt-7", logged.path(0).path("attemptId").asText());
        assertEquals("key-42", logged.path(0).path("requestKey").asText());
        assertEquals("with ids", logged.path(0).path("prompt").asText());
        assertFalse(logged.path(0).path("receivedAt").asText().isEmpty());
        assertTrue(logged.path(1).path("attemptId").isNull());
        assertTrue(logged.path(1).path("requestKey").isNull());
        // Other modules' tests read the log back into the same records.
        assertEquals(fake.requests(), List.of(JSON.readValue(body, ReceivedRequest[].class)));
    }

    @Test
    void listsStoredCompletionsByAttemptMetadata() throws Exception {
        String first = JSON.readTree(send(chat("one", "attempt-a", false)).body())
                .path("id")
                .asText();
        send(chat("two", "attempt-b", false));

        HttpResponse<String> raw = get("/v1/chat/completions?metadata[attempt_id]=attempt-a");
        HttpResponse<String> encoded = get("/v1/chat/completions?metadata%5Battempt_id%5D=attempt-a");
        JsonNode unknown = JSON.readTree(
                get("/v1/chat/completions?metadata%5Battempt_id%5D=nobody").body());

        for (HttpResponse<String> response : List.of(raw, encoded)) {
            JsonNode page = JSON.readTree(response.body());
            assertEquals("list", page.path("object").asText());
            assertEquals(1, page.path("data").size());
            assertEquals(first, page.path("data").path(0).path("id").asText());
        }
        assertEquals(0, unknown.path("data").size());
    }

    @Test
    void logsEachLookupWithTheAttemptItAskedAbout() throws Exception {
        String id = JSON.readTree(send(chat("one", "attempt-a", false)).body())
                .path("id")
                .asText();

        get("/v1/chat/completions?metadata%5Battempt_id%5D=attempt-a");
        get("/v1/chat/completions/" + id);
        get("/v1/chat/completions?metadata%5Battempt_id%5D=nobody");
        get("/v1/chat/completions/chatcmpl-nope");

        JsonNode lookups = JSON.readTree(get("/fake/lookups").body());
        assertEquals(4, lookups.size());
        assertEquals(
                List.of("attempt-a true", "attempt-a true", "nobody false", "null false"),
                List.of(lookups.get(0), lookups.get(1), lookups.get(2), lookups.get(3)).stream()
                        .map(l -> l.path("attemptId").asText("null") + " "
                                + l.path("found").asBoolean())
                        .toList());
        assertFalse(lookups.path(0).path("at").asText().isEmpty());
        assertEquals(fake.lookups(), List.of(JSON.readValue(get("/fake/lookups").body(), LookupReceived[].class)));
    }

    @Test
    void answersNotFoundInOpenAiShapeForUnknownCompletionsAndRoutes() throws Exception {
        for (String path : List.of("/v1/chat/completions/chatcmpl-nope", "/v1/models", "/")) {
            HttpResponse<String> response = get(path);

            assertEquals(404, response.statusCode(), path);
            assertEquals("invalid_request_error", error(response).path("type").asText(), path);
        }
    }

    @Test
    void rejectsMalformedRequestsWithOpenAiErrors() throws Exception {
        HttpResponse<String> notJson = CLIENT.send(post("/v1/chat/completions", "{not json"), ofString());
        HttpResponse<String> noMessages =
                CLIENT.send(post("/v1/chat/completions", "{\"model\":\"gpt-test\"}"), ofString());
        HttpResponse<String> badScript =
                CLIENT.send(post("/fake/scripts", "{\"match\":\"x\",\"steps\":[{\"status\":302}]}"), ofString());

        for (HttpResponse<String> response : List.of(notJson, noMessages, badScript)) {
            assertEquals(400, response.statusCode(), response.body());
            assertEquals("invalid_request_error", error(response).path("type").asText());
            assertFalse(response.body().contains("at dev.jobapi"), "no stack trace reaches the client");
        }
        assertTrue(fake.requests().isEmpty(), "a request the provider could not read takes no step and is not logged");
    }

    @Test
    void scriptsPostedOverHttpTakeDefaultsForMissingFields() throws Exception {
        HttpResponse<String> created = CLIENT.send(
                post("/fake/scripts", "{\"match\":\"over http\",\"steps\":[{\"status\":503},{}]}"), ofString());

        assertEquals(201, created.statusCode());
        assertEquals(503, send(chat("scripted over http", null, false)).statusCode());
        HttpResponse<String> healthy = send(chat("scripted over http", null, false));
        assertEquals(200, healthy.statusCode());
        assertEquals(
                PATCH,
                JSON.readTree(healthy.body())
                        .path("choices")
                        .path(0)
                        .path("message")
                        .path("content")
                        .asText());
        assertEquals(
                new Step(200, 0, false, false, PATCH), fake.requests().get(1).step());
    }

    @Test
    void aScriptPostedOverHttpWithAModelAnswersOnlyRequestsForThatModel() throws Exception {
        HttpResponse<String> created =
                CLIENT.send(post("/fake/scripts", "{\"model\":\"fake-b\",\"steps\":[{\"status\":503}]}"), ofString());

        assertEquals(201, created.statusCode(), created.body());
        assertEquals("fake-b", JSON.readTree(created.body()).path("model").asText());
        ObjectNode forFakeB = (ObjectNode) JSON.readTree(chat("the same prompt", null, false));
        forFakeB.put("model", "fake-b");
        assertEquals(503, send(forFakeB.toString()).statusCode());
        assertEquals(200, send(chat("the same prompt", null, false)).statusCode(), "gpt-test is another model");
        HttpResponse<String> blankModel =
                CLIENT.send(post("/fake/scripts", "{\"model\":\" \",\"steps\":[{\"status\":503}]}"), ofString());
        assertEquals(400, blankModel.statusCode(), blankModel.body());
    }

    @Test
    void deletingScriptsForgetsScriptsRequestsAndStoredCompletions() throws Exception {
        fake.addScript(Script.of("anything", Step.failing(500)));
        String id = JSON.readTree(send(chat("stored", "attempt-x", false)).body())
                .path("id")
                .asText();

        HttpResponse<String> deleted = CLIENT.send(
                HttpRequest.newBuilder(uri("/fake/scripts")).DELETE().build(), ofString());

        assertEquals(204, deleted.statusCode());
        assertEquals("[]", get("/fake/requests").body());
        assertEquals(404, get("/v1/chat/completions/" + id).statusCode());
        assertEquals(200, send(chat("anything", null, false)).statusCode(), "the script is gone");
    }

    private static String chat(String prompt, String attemptId, boolean stream) {
        ObjectNode body = JSON.createObjectNode();
        body.put("model", "gpt-test");
        body.putArray("messages").addObject().put("role", "user").put("content", prompt);
        if (stream) {
            body.put("stream", true);
            body.putObject("stream_options").put("include_usage", true);
        }
        if (attemptId != null) {
            body.putObject("metadata").put("attempt_id", attemptId);
        }
        return body.toString();
    }

    private HttpResponse<String> send(String chatBody) throws IOException, InterruptedException {
        return CLIENT.send(post("/v1/chat/completions", chatBody), ofString());
    }

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return CLIENT.send(HttpRequest.newBuilder(uri(path)).GET().build(), ofString());
    }

    private HttpRequest post(String path, String body) {
        return HttpRequest.newBuilder(uri(path))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
    }

    private List<JsonNode> listByAttempt(String attemptId) throws IOException, InterruptedException {
        JsonNode page = JSON.readTree(
                get("/v1/chat/completions?metadata[attempt_id]=" + attemptId).body());
        List<JsonNode> data = new ArrayList<>();
        page.path("data").forEach(data::add);
        return data;
    }

    private URI chatUri() {
        return uri("/v1/chat/completions");
    }

    private URI uri(String path) {
        return URI.create(fake.baseUrl() + path);
    }

    private static long millisSince(long startedNanos) {
        return (System.nanoTime() - startedNanos) / 1_000_000;
    }

    private static HttpResponse.BodyHandler<String> ofString() {
        return HttpResponse.BodyHandlers.ofString();
    }

    private static JsonNode error(HttpResponse<String> response) throws IOException {
        return JSON.readTree(response.body()).path("error");
    }

    /** The payloads of a server-sent event stream, without the {@code data: } prefix. */
    private static List<String> events(String stream) {
        return stream.lines()
                .filter(line -> line.startsWith("data: "))
                .map(line -> line.substring("data: ".length()))
                .collect(Collectors.toList());
    }
}
