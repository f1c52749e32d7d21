package dev.jobapi.fakeprovider;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * The OpenAI chat-completions routes: scripted answers to {@code POST}, and the stored completions a reconciler reads
 * back with {@code GET}.
 */
final class ChatCompletions {

    private static final String METADATA_PARAM_PREFIX = "metadata[";

    private final Supplier<ProviderState> state;
    private final Clock clock;

    ChatCompletions(Supplier<ProviderState> state, Clock clock) {
        this.state = state;
        this.clock = clock;
    }

    /** {@code POST /v1/chat/completions}: takes the matching script's next step and answers accordingly. */
    void create(HttpExchange exchange) throws IOException {
        Instant receivedAt = clock.instant();
        ChatRequest request = ChatRequest.from(Exchanges.readTree(exchange));
        String requestKey = exchange.getRequestHeaders().getFirst("Idempotency-Key");
        // Captured once: a reset during the delay must not move this request's outcome into the next run.
        ProviderState run = state.get();
        Step scripted = run.takeStep(request.prompt());
        Step step = scripted == null ? Step.ok() : scripted;
        int slot = run.logArrival(new ReceivedRequest(
                receivedAt.toString(),
                request.prompt(),
                request.attemptId(),
                requestKey,
                request.stream(),
                scripted,
                null,
                null,
                null));

        // The delay comes before the status line, so a client with a shorter read timeout gives up on a request
        // the provider has already taken and will still complete.
        if (!sleep(step.delayMs())) {
            return;
        }
        if (!step.succeeds()) {
            run.logOutcome(slot, logged -> logged.answered(step.status(), null, null));
            Exchanges.sendError(exchange, step.status(), "Scripted failure: status " + step.status() + ".");
            return;
        }

        String id = "chatcmpl-" + UUID.randomUUID().toString().replace("-", "");
        long created = clock.instant().getEpochSecond();
        ReceivedRequest.Usage usage =
                step.omitUsage() ? null : ReceivedRequest.Usage.count(request.prompt(), step.patch());
        exchange.getResponseHeaders().set("x-request-id", id);

        if (step.abortAfterFirstToken()) {
            // A broken answer is not a completion: nothing is stored and no usage was reported.
            run.logOutcome(slot, logged -> logged.answered(200, id, null));
            if (request.stream()) {
                abortStream(exchange, streamEvents(id, created, request, step.patch(), usage));
            } else {
                abortBody(exchange, completion(id, created, request, step.patch(), usage));
            }
            return;
        }

        ObjectNode completion = completion(id, created, request, step.patch(), usage);
        // Stored before a byte is written, so the completion exists even when the client has already given up.
        run.store(id, completion);
        run.logOutcome(slot, logged -> logged.answered(200, id, usage));
        if (request.stream()) {
            stream(exchange, streamEvents(id, created, request, step.patch(), usage));
        } else {
            Exchanges.sendJson(exchange, 200, completion);
        }
    }

    /** {@code GET /v1/chat/completions/{id}}: the stored completion, as OpenAI's stored-completions API returns it. */
    void get(HttpExchange exchange, String id) throws IOException {
        ObjectNode completion = state.get()
                .completion(id)
                .orElseThrow(() -> new ProviderError(404, "No chat completion found with id '" + id + "'."));
        Exchanges.sendJson(exchange, 200, completion);
    }

    /** {@code GET /v1/chat/completions?metadata[key]=value}: stored completions carrying that metadata. */
    void list(HttpExchange exchange) throws IOException {
        List<ObjectNode> found = state.get()
                .completionsWithMetadata(metadataFilter(exchange.getRequestURI().getRawQuery()));
        ObjectNode page = Exchanges.JSON.createObjectNode();
        page.put("object", "list");
        page.putArray("data").addAll(found);
        page.put("first_id", found.isEmpty() ? null : found.get(0).path("id").asText());
        page.put(
                "last_id",
                found.isEmpty() ? null : found.get(found.size() - 1).path("id").asText());
        page.put("has_more", false);
        Exchanges.sendJson(exchange, 200, page);
    }

    private static Map<String, String> metadataFilter(String rawQuery) {
        Map<String, String> filter = new LinkedHashMap<>();
        if (rawQuery == null || rawQuery.isEmpty()) {
            return filter;
        }
        for (String pair : rawQuery.split("&")) {
            int equals = pair.indexOf('=');
            String key = decode(equals < 0 ? pair : pair.substring(0, equals));
            String value = equals < 0 ? "" : decode(pair.substring(equals + 1));
            // Clients send the brackets raw or percent-encoded; decoding first treats both alike.
            if (key.startsWith(METADATA_PARAM_PREFIX) && key.endsWith("]")) {
                filter.put(key.substring(METADATA_PARAM_PREFIX.length(), key.length() - 1), value);
            }
        }
        return filter;
    }

    private static String decode(String text) {
        return URLDecoder.decode(text, StandardCharsets.UTF_8);
    }

    private static ObjectNode completion(
            String id, long created, ChatRequest request, String patch, ReceivedRequest.Usage usage) {
        ObjectNode completion = Exchanges.JSON.createObjectNode();
        completion.put("id", id);
        completion.put("object", "chat.completion");
        completion.put("created", created);
        completion.put("model", request.model());
        ObjectNode choice = completion.putArray("choices").addObject();
        choice.put("index", 0);
        ObjectNode message = choice.putObject("message");
        message.put("role", "assistant");
        message.put("content", patch);
        choice.put("finish_reason", "stop");
        if (usage != null) {
            completion.set("usage", usageNode(usage));
        }
        completion.set("metadata", request.metadata());
        return completion;
    }

    /** The server-sent events of a complete stream, each already framed as {@code data: ...\n\n}. */
    private static List<String> streamEvents(
            String id, long created, ChatRequest request, String patch, ReceivedRequest.Usage usage) {
        List<String> events = new ArrayList<>();
        List<String> pieces = pieces(patch);
        for (int i = 0; i < pieces.size(); i++) {
            ObjectNode chunk = chunk(id, created, request.model());
            ObjectNode choice = chunk.putArray("choices").addObject();
            choice.put("index", 0);
            ObjectNode delta = choice.putObject("delta");
            if (i == 0) {
                delta.put("role", "assistant");
            }
            delta.put("content", pieces.get(i));
            choice.putNull("finish_reason");
            events.add(event(chunk));
        }
        ObjectNode last = chunk(id, created, request.model());
        ObjectNode stop = last.putArray("choices").addObject();
        stop.put("index", 0);
        stop.putObject("delta");
        stop.put("finish_reason", "stop");
        events.add(event(last));
        if (request.includeUsage() && usage != null) {
            ObjectNode usageChunk = chunk(id, created, request.model());
            usageChunk.putArray("choices");
            usageChunk.set("usage", usageNode(usage));
            events.add(event(usageChunk));
        }
        events.add("data: [DONE]\n\n");
        return events;
    }

    /** The patch split after each line break; an empty patch still yields one (empty) first token. */
    private static List<String> pieces(String patch) {
        List<String> pieces = new ArrayList<>();
        int start = 0;
        while (start < patch.length()) {
            int newline = patch.indexOf('\n', start);
            int end = newline < 0 ? patch.length() : newline + 1;
            pieces.add(patch.substring(start, end));
            start = end;
        }
        if (pieces.isEmpty()) {
            pieces.add("");
        }
        return pieces;
    }

    private static ObjectNode chunk(String id, long created, String model) {
        ObjectNode chunk = Exchanges.JSON.createObjectNode();
        chunk.put("id", id);
        chunk.put("object", "chat.completion.chunk");
        chunk.put("created", created);
        chunk.put("model", model);
        return chunk;
    }

    private static String event(ObjectNode chunk) {
        return "data: " + chunk + "\n\n";
    }

    private static ObjectNode usageNode(ReceivedRequest.Usage usage) {
        ObjectNode node = Exchanges.JSON.createObjectNode();
        node.put("prompt_tokens", usage.promptTokens());
        node.put("completion_tokens", usage.completionTokens());
        node.put("total_tokens", usage.totalTokens());
        return node;
    }

    private static void stream(HttpExchange exchange, List<String> events) throws IOException {
        streamHeaders(exchange);
        exchange.sendResponseHeaders(200, 0);
        try (OutputStream out = exchange.getResponseBody()) {
            for (String event : events) {
                out.write(event.getBytes(StandardCharsets.UTF_8));
                // Flushed per event so the client sees tokens arrive one by one, as from a real model.
                out.flush();
            }
        }
    }

    /** Sends the headers and the first token, then breaks the connection: the client sees a premature end. */
    private static void abortStream(HttpExchange exchange, List<String> events) throws IOException {
        streamHeaders(exchange);
        byte[] first = events.get(0).getBytes(StandardCharsets.UTF_8);
        long fullLength = events.stream()
                .mapToLong(event -> event.getBytes(StandardCharsets.UTF_8).length)
                .sum();
        breakAfter(exchange, first, fullLength);
    }

    /** Sends the headers and the first half of the JSON body, then breaks the connection. */
    private static void abortBody(HttpExchange exchange, ObjectNode completion) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        byte[] body = Exchanges.JSON.writeValueAsBytes(completion);
        byte[] firstHalf = new byte[body.length / 2];
        System.arraycopy(body, 0, firstHalf, 0, firstHalf.length);
        breakAfter(exchange, firstHalf, body.length);
    }

    /**
     * Promises {@code promisedLength} bytes but writes only {@code written}. Closing an exchange that owes bytes on a
     * fixed Content-Length makes the JDK server close the connection, so the client reads an early end of body
     * instead of a clean end of stream (chunked encoding would end cleanly and look like a complete answer).
     */
    private static void breakAfter(HttpExchange exchange, byte[] written, long promisedLength) throws IOException {
        exchange.sendResponseHeaders(200, promisedLength);
        OutputStream out = exchange.getResponseBody();
        out.write(written);
        out.flush();
        exchange.close();
    }

    private static void streamHeaders(HttpExchange exchange) {
        exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
        exchange.getResponseHeaders().set("Cache-Control", "no-cache");
    }

    /** Sleeps the scripted delay; false when interrupted, which only {@link FakeProvider#stop()} does. */
    private static boolean sleep(long delayMs) {
        if (delayMs == 0) {
            return true;
        }
        try {
            Thread.sleep(delayMs);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
