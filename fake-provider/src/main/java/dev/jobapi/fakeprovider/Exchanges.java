package dev.jobapi.fakeprovider;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/** Reads and writes JSON over an {@link HttpExchange}, including the OpenAI error shape. */
final class Exchanges {

    static final ObjectMapper JSON = new ObjectMapper();

    private Exchanges() {}

    /** Parses the request body, answering 400 for malformed JSON rather than failing the handler. */
    static JsonNode readTree(HttpExchange exchange) throws IOException {
        try (InputStream body = exchange.getRequestBody()) {
            JsonNode tree = JSON.readTree(body.readAllBytes());
            if (tree == null || tree.isMissingNode()) {
                throw new ProviderError(400, "The request body is empty; expected JSON.");
            }
            return tree;
        } catch (JsonProcessingException e) {
            throw new ProviderError(400, "The request body is not valid JSON: " + e.getOriginalMessage());
        }
    }

    /** Binds the request body to {@code type}; malformed JSON and refused values both answer 400. */
    static <T> T read(HttpExchange exchange, Class<T> type) throws IOException {
        JsonNode tree = readTree(exchange);
        try {
            T value = JSON.treeToValue(tree, type);
            if (value == null) {
                throw new ProviderError(400, "Expected a JSON object, got null.");
            }
            return value;
        } catch (JsonProcessingException e) {
            throw new ProviderError(400, "Invalid " + type.getSimpleName() + ": " + e.getOriginalMessage());
        }
    }

    static void sendJson(HttpExchange exchange, int status, Object body) throws IOException {
        byte[] bytes = JSON.writeValueAsBytes(body);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    /**
     * Sends the status line and headers at once, then {@code body} with a pause of {@code stallMs} before its first
     * byte, or after half of it when {@code afterHalf}: a provider whose answer hangs after the headers. The length is
     * announced up front, so the client keeps waiting for the rest instead of reading an early end.
     */
    static void sendStalling(HttpExchange exchange, int status, Object body, boolean afterHalf, long stallMs)
            throws IOException {
        byte[] bytes = JSON.writeValueAsBytes(body);
        int split = afterHalf ? bytes.length / 2 : 0;
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes, 0, split);
            out.flush();
            stall(stallMs);
            out.write(bytes, split, bytes.length - split);
        }
    }

    /** Sleeps {@code stallMs}; an interrupt (only {@link FakeProvider#stop()} sends one) abandons the answer. */
    static void stall(long stallMs) throws IOException {
        if (stallMs == 0) {
            return;
        }
        try {
            Thread.sleep(stallMs);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("the fake provider stopped during a stall", e);
        }
    }

    static void sendNoContent(HttpExchange exchange) throws IOException {
        exchange.sendResponseHeaders(204, -1);
    }

    static void sendError(HttpExchange exchange, int status, String message) throws IOException {
        sendJson(exchange, status, errorBody(status, message));
    }

    /** {@code {"error":{"message","type","param","code"}}} as OpenAI answers it, typed by status. */
    static ObjectNode errorBody(int status, String message) {
        String type;
        if (status == 429) {
            type = "rate_limit_exceeded";
        } else if (status >= 500) {
            type = "server_error";
        } else {
            type = "invalid_request_error";
        }
        ObjectNode body = JSON.createObjectNode();
        ObjectNode error = body.putObject("error");
        error.put("message", message);
        error.put("type", type);
        error.putNull("param");
        if (status == 429) {
            error.put("code", "rate_limit_exceeded");
        } else {
            error.putNull("code");
        }
        return body;
    }
}
