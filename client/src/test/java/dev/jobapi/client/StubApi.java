package dev.jobapi.client;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/** A scripted HTTP server: each request takes the next answer (the last one repeats) and is recorded. */
final class StubApi implements AutoCloseable {

    /** One scripted answer. */
    record Answer(int status, Map<String, String> headers, String body) {}

    /** What the client sent. */
    record Received(String method, String path, Map<String, List<String>> headers, String body) {
        String header(String name) {
            return headers.entrySet().stream()
                    .filter(e -> e.getKey().equalsIgnoreCase(name))
                    .map(e -> e.getValue().get(0))
                    .findFirst()
                    .orElse(null);
        }
    }

    private final HttpServer server;
    private final Deque<Answer> script = new ArrayDeque<>();
    private final List<Received> received = new CopyOnWriteArrayList<>();

    StubApi() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", this::handle);
        server.start();
    }

    URI uri() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    synchronized StubApi then(int status, String body, Map<String, String> headers) {
        script.addLast(new Answer(status, headers, body));
        return this;
    }

    StubApi then(int status, String body) {
        return then(status, body, Map.of());
    }

    static String problem(int status, String code) {
        return "{\"type\":\"/problems/" + code + "\",\"title\":\"t\",\"status\":" + status
                + ",\"detail\":\"d\",\"code\":\"" + code + "\"}";
    }

    List<Received> received() {
        return received;
    }

    private void handle(HttpExchange exchange) throws IOException {
        String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        received.add(new Received(
                exchange.getRequestMethod(),
                exchange.getRequestURI().toString(),
                Map.copyOf(exchange.getRequestHeaders()),
                body));
        Answer answer;
        synchronized (this) {
            answer = script.size() > 1 ? script.pollFirst() : script.peekFirst();
        }
        answer.headers().forEach(exchange.getResponseHeaders()::add);
        byte[] bytes = answer.body().getBytes(StandardCharsets.UTF_8);
        String type = answer.status() >= 400 ? "application/problem+json" : "application/json";
        exchange.getResponseHeaders().add("Content-Type", type);
        exchange.sendResponseHeaders(answer.status(), bytes.length == 0 ? -1 : bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
