package dev.jobapi.api;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;

/**
 * A webhook receiver on 127.0.0.1 for tests: records every request it is sent, and answers each with
 * the next status of its script, then with its steady status.
 */
final class WebhookReceiver implements AutoCloseable {

    /** One request as received, and the status it was answered with. */
    record Received(Map<String, List<String>> headers, byte[] body, int answered) {
        String header(String name) {
            return headers.entrySet().stream()
                    .filter(entry -> entry.getKey().equalsIgnoreCase(name))
                    .map(entry -> entry.getValue().get(0))
                    .findFirst()
                    .orElse(null);
        }
    }

    private final HttpServer server;
    private final Deque<Integer> script = new ArrayDeque<>();
    private final List<Received> received = new ArrayList<>();
    private int steady = 204;

    WebhookReceiver() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            byte[] body = exchange.getRequestBody().readAllBytes();
            int status;
            synchronized (this) {
                status = script.isEmpty() ? steady : script.removeFirst();
                received.add(new Received(Map.copyOf(exchange.getRequestHeaders()), body, status));
            }
            exchange.sendResponseHeaders(status, -1);
            exchange.close();
        });
        server.start();
    }

    String url(String path) {
        return "http://127.0.0.1:" + server.getAddress().getPort() + path;
    }

    /** The next requests are answered with these statuses, in order. */
    synchronized WebhookReceiver answerFirst(int... statuses) {
        for (int status : statuses) {
            script.addLast(status);
        }
        return this;
    }

    /** Every request after the script is answered with this status. */
    synchronized WebhookReceiver answerAlways(int status) {
        steady = status;
        return this;
    }

    synchronized List<Received> received() {
        return List.copyOf(received);
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
