package dev.jobapi.fakeprovider;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The Anthropic Messages route, {@code POST /v1/messages}, driven by the same scripts as chat completions. Anthropic
 * keeps no fetchable record of a message, so nothing is stored; a late answer reaches the job API only by callback.
 */
final class Messages {

    static final String VERSION_HEADER = "anthropic-version";

    private final Answering answering;

    Messages(Answering answering) {
        this.answering = answering;
    }

    /** {@code POST /v1/messages}: takes the matching script's next step and answers accordingly. */
    void create(HttpExchange exchange) throws IOException {
        if (exchange.getRequestHeaders().getFirst(VERSION_HEADER) == null) {
            throw new ProviderError(400, VERSION_HEADER + ": header is required");
        }
        MessagesRequest request = MessagesRequest.from(Exchanges.readTree(exchange));
        String id = "msg_" + UUID.randomUUID().toString().replace("-", "");
        Answering.Answer answer =
                answering.take(exchange, request.model(), request.prompt(), request.attemptId(), request.stream(), id);
        if (answer == null) {
            return;
        }
        Step step = answer.step();
        // Anthropic sends its own request id on every answer, errors included.
        exchange.getResponseHeaders()
                .set("request-id", "req_" + UUID.randomUUID().toString().replace("-", ""));
        if (!step.succeeds()) {
            answer.logAnswered(step.status(), null, null);
            Exchanges.sendStalling(
                    exchange,
                    step.status(),
                    errorBody(step.status(), "Scripted failure: status " + step.status() + "."),
                    false,
                    step.stallMs());
            return;
        }
        if (step.omitUsage()) {
            endBeforeTheOutputCount(exchange, request, step, answer, id);
            return;
        }
        ReceivedRequest.Usage usage = answer.usage();
        if (step.abortAfterFirstToken()) {
            answer.logAnswered(200, id, null);
            if (request.stream()) {
                List<String> events = streamEvents(id, request.model(), step, usage);
                // Anthropic reports a failure mid-stream as an error event; then the connection goes.
                List<String> written = new ArrayList<>(events.subList(0, 3));
                written.add(event("error", errorBody(529, "Overloaded")));
                EventStreams.abortStream(exchange, written, events);
            } else {
                EventStreams.abortBody(exchange, message(id, request.model(), step, usage));
            }
            return;
        }
        answer.logAnswered(200, id, usage);
        if (request.stream()) {
            // message_start, content_block_start and the first text delta: the first token is out, the rest hangs.
            EventStreams.stream(exchange, streamEvents(id, request.model(), step, usage), 3, step.stallMs());
        } else {
            Exchanges.sendStalling(exchange, 200, message(id, request.model(), step, usage), true, step.stallMs());
        }
    }

    /**
     * Missing usage as Anthropic can actually fail: every message it sends carries usage (the input
     * count in {@code message_start}, the output count in {@code message_delta}), so what goes missing
     * is the end of the answer. The stream breaks after the text, before {@code message_delta}; a whole
     * (non-streamed) message breaks off halfway. No output count ever arrives, and nothing is logged as
     * reported.
     */
    private static void endBeforeTheOutputCount(
            HttpExchange exchange, MessagesRequest request, Step step, Answering.Answer answer, String id)
            throws IOException {
        answer.logAnswered(200, id, null);
        ReceivedRequest.Usage counted = ReceivedRequest.Usage.count(request.prompt(), step.output());
        if (request.stream()) {
            List<String> events = streamEvents(id, request.model(), step, counted);
            // Everything up to content_block_stop; message_delta and message_stop never come.
            EventStreams.abortStream(exchange, events.subList(0, events.size() - 2), events);
        } else {
            EventStreams.abortBody(exchange, message(id, request.model(), step, counted));
        }
    }

    /** {@code {"type":"error","error":{"type","message"}}} as Anthropic answers it, typed by status. */
    static ObjectNode errorBody(int status, String message) {
        ObjectNode body = Exchanges.JSON.createObjectNode();
        body.put("type", "error");
        ObjectNode error = body.putObject("error");
        error.put("type", errorType(status));
        error.put("message", message);
        return body;
    }

    private static String errorType(int status) {
        return switch (status) {
            case 401 -> "authentication_error";
            case 403 -> "permission_error";
            case 404 -> "not_found_error";
            case 413 -> "request_too_large";
            case 429 -> "rate_limit_error";
            case 529 -> "overloaded_error";
            default -> status >= 500 ? "api_error" : "invalid_request_error";
        };
    }

    /** How a step's answer ends: cut at the output limit, or the model's natural end of turn. */
    private static String stopReason(Step step) {
        return step.truncated() ? "max_tokens" : "end_turn";
    }

    private static ObjectNode message(String id, String model, Step step, ReceivedRequest.Usage usage) {
        ObjectNode message = messageStart(id, model, usage);
        message.putArray("content").addObject().put("type", "text").put("text", step.output());
        message.put("stop_reason", stopReason(step));
        message.putObject("usage")
                .put("input_tokens", usage.promptTokens())
                .put("output_tokens", usage.completionTokens());
        return message;
    }

    /** The message as {@code message_start} announces it: no content yet, the input count and a provisional output. */
    private static ObjectNode messageStart(String id, String model, ReceivedRequest.Usage usage) {
        ObjectNode message = Exchanges.JSON.createObjectNode();
        message.put("id", id);
        message.put("type", "message");
        message.put("role", "assistant");
        message.putArray("content");
        message.put("model", model);
        message.putNull("stop_reason");
        message.putNull("stop_sequence");
        message.putObject("usage").put("input_tokens", usage.promptTokens()).put("output_tokens", 1);
        return message;
    }

    /**
     * The events of a complete stream: message_start, one text block in several deltas, message_delta with the stop
     * reason and the output count, message_stop.
     */
    private static List<String> streamEvents(String id, String model, Step step, ReceivedRequest.Usage usage) {
        List<String> events = new ArrayList<>();
        ObjectNode start = Exchanges.JSON.createObjectNode();
        start.put("type", "message_start");
        start.set("message", messageStart(id, model, usage));
        events.add(event("message_start", start));
        ObjectNode blockStart = Exchanges.JSON.createObjectNode();
        blockStart.put("type", "content_block_start");
        blockStart.put("index", 0);
        blockStart.putObject("content_block").put("type", "text").put("text", "");
        events.add(event("content_block_start", blockStart));
        for (String piece : EventStreams.pieces(step.output())) {
            ObjectNode delta = Exchanges.JSON.createObjectNode();
            delta.put("type", "content_block_delta");
            delta.put("index", 0);
            delta.putObject("delta").put("type", "text_delta").put("text", piece);
            events.add(event("content_block_delta", delta));
        }
        ObjectNode blockStop = Exchanges.JSON.createObjectNode();
        blockStop.put("type", "content_block_stop");
        blockStop.put("index", 0);
        events.add(event("content_block_stop", blockStop));
        ObjectNode messageDelta = Exchanges.JSON.createObjectNode();
        messageDelta.put("type", "message_delta");
        messageDelta.putObject("delta").put("stop_reason", stopReason(step)).putNull("stop_sequence");
        messageDelta.putObject("usage").put("output_tokens", usage.completionTokens());
        events.add(event("message_delta", messageDelta));
        ObjectNode stop = Exchanges.JSON.createObjectNode();
        stop.put("type", "message_stop");
        events.add(event("message_stop", stop));
        return events;
    }

    private static String event(String type, ObjectNode data) {
        return "event: " + type + "\ndata: " + data + "\n\n";
    }
}
