package dev.jobapi.fakeprovider;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Writes whole and broken answers, streamed or not, for every API the fake speaks. */
final class EventStreams {

    private EventStreams() {}

    /** The patch split after each line break; an empty patch still yields one (empty) first token. */
    static List<String> pieces(String patch) {
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

    static void stream(HttpExchange exchange, List<String> events) throws IOException {
        stream(exchange, events, 0, 0);
    }

    /** Streams {@code events}, pausing {@code stallMs} after the first {@code stallAfter} of them (0 ms: no pause). */
    static void stream(HttpExchange exchange, List<String> events, int stallAfter, long stallMs) throws IOException {
        streamHeaders(exchange);
        exchange.sendResponseHeaders(200, 0);
        try (OutputStream out = exchange.getResponseBody()) {
            for (int i = 0; i < events.size(); i++) {
                if (i == stallAfter && stallMs > 0) {
                    // What was written arrives before the pause; an answer with none goes out at once, in
                    // as few writes as the server's chunks allow, as a model that has finished would send it.
                    out.flush();
                    Exchanges.stall(stallMs);
                }
                out.write(events.get(i).getBytes(StandardCharsets.UTF_8));
            }
        }
    }

    /** Sends the headers and the {@code written} events of the whole {@code events}, then breaks the connection. */
    static void abortStream(HttpExchange exchange, List<String> written, List<String> events) throws IOException {
        streamHeaders(exchange);
        byte[] bytes = String.join("", written).getBytes(StandardCharsets.UTF_8);
        breakAfter(exchange, bytes, Math.max(length(events), bytes.length) + 1);
    }

    /** Sends the headers and the first half of the JSON body, then breaks the connection. */
    static void abortBody(HttpExchange exchange, Object body) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        byte[] bytes = Exchanges.JSON.writeValueAsBytes(body);
        byte[] firstHalf = new byte[bytes.length / 2];
        System.arraycopy(bytes, 0, firstHalf, 0, firstHalf.length);
        breakAfter(exchange, firstHalf, bytes.length);
    }

    private static long length(List<String> events) {
        return events.stream()
                .mapToLong(event -> event.getBytes(StandardCharsets.UTF_8).length)
                .sum();
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
}
