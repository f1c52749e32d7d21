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
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Puts a TCP proxy between the application under test and its PostgreSQL that answers its first
 * {@link #AWAY} connections by closing them (a database that is away: a failover, a primary
 * restarting), then forwards. The application is started while it is away; counted in connections,
 * not seconds, so a slow start-up cannot miss the outage.
 */
public class LateDatabaseResource implements QuarkusTestResourceLifecycleManager {

    public static final int AWAY = 3;
    private static final AtomicInteger turnedAway = new AtomicInteger();

    private ServerSocket listener;
    private volatile boolean stopped;

    /** Connections the proxy closed while the database was away. */
    public static int turnedAway() {
        return turnedAway.get();
    }

    @Override
    public Map<String, String> start() {
        URI database = URI.create(System.getenv()
                .getOrDefault("JOBAPI_TEST_DB_URL", "jdbc:postgresql://127.0.0.1:5432/jobapi_test")
                .substring("jdbc:".length()));
        try {
            listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new IllegalStateException("no port for the proxy", e);
        }
        Thread acceptor = new Thread(() -> accept(database), "late-database-proxy");
        acceptor.setDaemon(true);
        acceptor.start();
        String url = "jdbc:postgresql://127.0.0.1:" + listener.getLocalPort() + database.getPath()
                + (database.getQuery() == null ? "" : "?" + database.getQuery());
        // The profile's key, which application.properties sets and which outranks the plain one.
        return Map.of("%test.quarkus.datasource.jdbc.url", url);
    }

    private void accept(URI database) {
        while (!stopped) {
            try {
                Socket client = listener.accept();
                if (turnedAway.get() < AWAY) {
                    turnedAway.incrementAndGet();
                    client.close();
                    continue;
                }
                Socket server = new Socket(database.getHost(), database.getPort());
                pump(client.getInputStream(), server.getOutputStream(), client, server);
                pump(server.getInputStream(), client.getOutputStream(), server, client);
            } catch (IOException e) {
                if (!stopped) {
                    // One connection failed; the next is accepted as usual.
                    continue;
                }
            }
        }
    }

    private static void pump(InputStream from, OutputStream to, Socket a, Socket b) {
        Thread thread = new Thread(
                () -> {
                    try (a;
                            b) {
                        from.transferTo(to);
                    } catch (IOException closed) {
                        // Either side closed: both are closed on the way out.
                    }
                },
                "late-database-pump");
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
