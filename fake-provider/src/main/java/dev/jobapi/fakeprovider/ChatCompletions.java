package dev.jobapi.fakeprovider;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * The OpenAI chat-completions routes: scripted answers to {@code POST}, and the stored completions a reconciler reads
 * back with {@code GET}.
 */
final class ChatCompletions {

    private static final String METADATA_PARAM_PREFIX = "metadata[";
    /** The metadata key our worker puts its attempt id in. */
    private static final String ATTEMPT_ID = "attempt_id";

    private final Supplier<ProviderState> state;
    private final Clock clock;
    private final Answering answering;

    ChatCompletions(Supplier<ProviderState> state, Clock clock, Answering answering) {
        this.state = state;
        this.clock = clock;
        this.answering = answering;
    }

    /** {@code POST /v1/chat/completions}: takes the matching script's next step and answers accordingly. */
    void create(HttpExchange exchange) throws IOException {
        ChatRequest request = ChatRequest.from(Exchanges.readTree(exchange));
        String id = "chatcmpl-" + UUID.randomUUID().toString().replace("-", "");
        Answering.Answer answer =
                answering.take(exchange, request.model(), request.prompt(), request.attemptId(), request.stream(), id);
        if (answer == null) {
            return;
        }
        Step step = answer.step();
        if (!step.succeeds()) {
            answer.logAnswered(step.status(), null, null);
            Exchanges.sendStalling(
                    exchange,
                    step.status(),
                    Exchanges.errorBody(step.status(), "Scripted failure: status " + step.status() + "."),
                    false,
                    step.stallMs());
            return;
        }

        long created = clock.instant().getEpochSecond();
        ReceivedRequest.Usage usage = answer.usage();
        exchange.getResponseHeaders().set("x-request-id", id);

        if (step.abortAfterFirstToken()) {
            // A broken answer is not a completion: nothing is stored and no usage was reported.
            answer.logAnswered(200, id, null);
            if (request.stream()) {
                List<String> events = streamEvents(id, created, request, step, usage);
                EventStreams.abortStream(exchange, events.subList(0, 1), events);
            } else {
                EventStreams.abortBody(exchange, completion(id, created, request, step, usage));
            }
            return;
        }

        ObjectNode completion = completion(id, created, request, step, usage);
        // Stored before a byte is written, so the completion exists even when the client has already given up.
        answer.run().store(id, completion, step.stallMs());
        answer.logAnswered(200, id, usage);
        if (request.stream()) {
            // The stall comes after the first chunk: the first token is out, the rest hangs.
            EventStreams.stream(exchange, streamEvents(id, created, request, step, usage), 1, step.stallMs());
        } else {
            Exchanges.sendStalling(exchange, 200, completion, true, step.stallMs());
        }
    }

    /** {@code GET /v1/chat/completions/{id}}: the stored completion, as OpenAI's stored-completions API returns it. */
    void get(HttpExchange exchange, String id) throws IOException {
        ProviderState run = state.get();
        Optional<ObjectNode> stored = run.completion(id);
        run.logLookup(new LookupReceived(
                clock.instant().toString(),
                stored.map(c -> c.path("metadata").path(ATTEMPT_ID).asText(null))
                        .orElse(null),
                stored.isPresent()));
        ObjectNode completion =
                stored.orElseThrow(() -> new ProviderError(404, "No chat completion found with id '" + id + "'."));
        Exchanges.sendStalling(exchange, 200, completion, true, run.stallOf(List.of(id)));
    }

    /** {@code GET /v1/chat/completions?metadata[key]=value}: stored completions carrying that metadata. */
    void list(HttpExchange exchange) throws IOException {
        ProviderState run = state.get();
        Map<String, String> filter = metadataFilter(exchange.getRequestURI().getRawQuery());
        List<ObjectNode> found = run.completionsWithMetadata(filter);
        run.logLookup(new LookupReceived(clock.instant().toString(), filter.get(ATTEMPT_ID), !found.isEmpty()));
        ObjectNode page = Exchanges.JSON.createObjectNode();
        page.put("object", "list");
        page.putArray("data").addAll(found);
        page.put("first_id", found.isEmpty() ? null : found.get(0).path("id").asText());
        page.put(
                "last_id",
                found.isEmpty() ? null : found.get(found.size() - 1).path("id").asText());
        page.put("has_more", false);
        long stallMs = run.stallOf(
                found.stream().map(completion -> completion.path("id").asText()).toList());
        Exchanges.sendStalling(exchange, 200, page, true, stallMs);
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

    /** How a step's answer ends: cut at the output limit, or a natural stop. */
    private static String finishReason(Step step) {
        return step.truncated() ? "length" : "stop";
    }

    private static ObjectNode completion(
            String id, long created, ChatRequest request, Step step, ReceivedRequest.Usage usage) {
        ObjectNode completion = Exchanges.JSON.createObjectNode();
        completion.put("id", id);
        completion.put("object", "chat.completion");
        completion.put("created", created);
        completion.put("model", request.model());
        ObjectNode choice = completion.putArray("choices").addObject();
        choice.put("index", 0);
        ObjectNode message = choice.putObject("message");
        message.put("role", "assistant");
        message.put("content", step.output());
        // Both are in OpenAI's schema, null unless asked for (logprobs) or the model declined (refusal).
        message.putNull("refusal");
        choice.putNull("logprobs");
        choice.put("finish_reason", finishReason(step));
        if (usage != null) {
            completion.set("usage", usageNode(usage));
        }
        completion.set("metadata", request.metadata());
        return completion;
    }

    /** The server-sent events of a complete stream, each already framed as {@code data: ...\n\n}. */
    private static List<String> streamEvents(
            String id, long created, ChatRequest request, Step step, ReceivedRequest.Usage usage) {
        List<String> events = new ArrayList<>();
        List<String> pieces = EventStreams.pieces(step.output());
        for (int i = 0; i < pieces.size(); i++) {
            ObjectNode chunk = chunk(id, created, request.model());
            ObjectNode choice = chunk.putArray("choices").addObject();
            choice.put("index", 0);
            ObjectNode delta = choice.putObject("delta");
            if (i == 0) {
                delta.put("role", "assistant");
            }
            delta.put("content", pieces.get(i));
            if (i == 0) {
                delta.putNull("refusal");
            }
            choice.putNull("logprobs");
            choice.putNull("finish_reason");
            events.add(event(chunk));
        }
        ObjectNode last = chunk(id, created, request.model());
        ObjectNode stop = last.putArray("choices").addObject();
        stop.put("index", 0);
        stop.putObject("delta");
        stop.putNull("logprobs");
        stop.put("finish_reason", finishReason(step));
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
}
