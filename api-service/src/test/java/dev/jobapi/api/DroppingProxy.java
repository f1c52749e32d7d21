package dev.jobapi.api;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy in front of the api that, when armed, lets the next request through and then cuts both
 * connections as the first bytes of its response arrive: the server has committed and answered, the
 * client never hears it. That is the failure an Idempotency-Key exists for.
 */
final class DroppingProxy implements AutoCloseable {

    private final ServerSocket listener;
    private final int targetPort;
    private final AtomicBoolean dropNextResponse = new AtomicBoolean();
    private final AtomicInteger dropped = new AtomicInteger();

    DroppingProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "dropping-proxy");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    URI uri() {
        return URI.create("http://127.0.0.1:" + listener.getLocalPort());
    }

    /** The next response from the api is dropped, connection and all. */
    void dropNextResponse() {
        dropNextResponse.set(true);
    }

    int dropped() {
        return dropped.get();
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                pump(client, server, false);
                pump(server, client, true);
            } catch (IOException closed) {
                return;
            }
        }
    }

    private void pump(Socket from, Socket to, boolean responses) {
        Thread pump = new Thread(
                () -> {
                    byte[] buffer = new byte[8192];
                    try (from;
                            to) {
                        InputStream in = from.getInputStream();
                        OutputStream out = to.getOutputStream();
                        int n;
                        while ((n = in.read(buffer)) > 0) {
                            if (responses && dropNextResponse.compareAndSet(true, false)) {
                                dropped.incrementAndGet();
                                return;
                            }
                            out.write(buffer, 0, n);
                            out.flush();
                        }
                    } catch (IOException closedByTheOtherSide) {
                        // The other pump closed both sockets.
                    }
                },
                "dropping-proxy-pump");
        pump.setDaemon(true);
        pump.start();
    }

    @Override
    public void close() throws IOException {
        listener.close();
    }
}
