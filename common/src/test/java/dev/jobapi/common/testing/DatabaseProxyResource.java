package dev.jobapi.common.testing;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.Map;

/**
 * A TCP proxy between the application under test and its PostgreSQL; what it does to a new
 * connection before forwarding it (turn it away, hold it) is the subclass's.
 */
abstract class DatabaseProxyResource implements QuarkusTestResourceLifecycleManager {

    private ServerSocket listener;
    private volatile boolean stopped;

    /**
     * Called on a thread of the connection's own before anything reaches the database; false closes
     * the connection instead of forwarding it.
     */
    abstract boolean admit(Socket client) throws InterruptedException;

    @Override
    public Map<String, String> start() {
        URI database = URI.create(System.getenv()
                .getOrDefault("JOBAPI_TEST_DB_URL", "jdbc:postgresql://127.0.0.1:5432/jobapi_test")
                .substring("jdbc:".length()));
        try {
            listener = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new IllegalStateException("no port for the proxy", e);
        }
        daemon("database-proxy", () -> accept(database));
        String url = "jdbc:postgresql://127.0.0.1:" + listener.getLocalPort() + database.getPath()
                + (database.getQuery() == null ? "" : "?" + database.getQuery());
        // The profile's key, which application.properties sets and which outranks the plain one.
        return Map.of("%test.quarkus.datasource.jdbc.url", url);
    }

    private void accept(URI database) {
        while (!stopped) {
            try {
                Socket client = listener.accept();
                daemon("database-proxy-open", () -> open(client, database));
            } catch (IOException e) {
                // The listener closed (stopped) or one accept failed; the loop decides.
            }
        }
    }

    private void open(Socket client, URI database) {
        try {
            if (!admit(client)) {
                client.close();
                return;
            }
            // What the client sent meanwhile waits in the socket's buffer.
            Socket server = new Socket(database.getHost(), database.getPort());
            pump(client.getInputStream(), server.getOutputStream(), client, server);
            pump(server.getInputStream(), client.getOutputStream(), server, client);
        } catch (IOException | InterruptedException e) {
            try {
                client.close();
            } catch (IOException closing) {
                // Closed either way.
            }
        }
    }

    private static void pump(InputStream from, OutputStream to, Socket a, Socket b) {
        daemon("database-proxy-pump", () -> {
            try (a;
                    b) {
                from.transferTo(to);
            } catch (IOException closed) {
                // Either side closed: both are closed on the way out.
            }
        });
    }

    private static void daemon(String name, Runnable body) {
        Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public void stop() {
        stopped = true;
        try {
            listener.close();
        } catch (IOException e) {
            // Closing anyway.
        }
    }
}
