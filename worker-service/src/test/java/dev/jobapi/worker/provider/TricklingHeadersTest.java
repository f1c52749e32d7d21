package dev.jobapi.worker.provider;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * docs/providers.md, "every blocking step is bounded": a provider that sends its status line and
 * then one byte of its headers every 200 ms never lets a socket read wait as long as the read
 * timeout, so only the wait for the headers as a whole bounds the send. It ends as unknown (the
 * request was sent) by the connect and read timeouts, never later.
 */
class TricklingHeadersTest {

    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(1);
    private static final Duration READ_TIMEOUT = Duration.ofSeconds(1);

    private ServerSocket server;
    private final ScheduledExecutorService trickle = Executors.newScheduledThreadPool(1);
    private final AtomicInteger bytesTrickled = new AtomicInteger();

    @BeforeEach
    void startAServerThatTricklesItsHeaders() throws IOException {
        server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(() -> {
            try {
                Socket socket = server.accept();
                InputStream request = socket.getInputStream();
                request.read(new byte[8192]); // the request's first bytes: it was sent
                OutputStream out = socket.getOutputStream();
                out.write("HTTP/1.1 200 OK\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                trickle.scheduleAtFixedRate(
                        () -> {
                            try {
                                out.write('x');
                                out.flush();
                                bytesTrickled.incrementAndGet();
                            } catch (IOException closedByTheClient) {
                                trickle.shutdown();
                            }
                        },
                        200,
                        200,
                        TimeUnit.MILLISECONDS);
            } catch (IOException serverStopped) {
                // The test is over.
            }
        });
        acceptor.setDaemon(true);
        acceptor.start();
    }

    @AfterEach
    void stopServer() throws IOException {
        trickle.shutdownNow();
        server.close();
    }

    @Test
    void headersTrickledPastTheReadTimeoutEndTheSendAsUnknownWithinTheTimeouts() {
        OpenAiCompatibleProvider adapter = TestAdapters.openAi(
                "trickling",
                "http://127.0.0.1:" + server.getLocalPort(),
                new TestTransport(CONNECT_TIMEOUT, READ_TIMEOUT, 3, Duration.ofMillis(50), 1024 * 1024));

        long started = System.nanoTime();
        ProviderOutcome outcome = assertTimeoutPreemptively(
                Duration.ofSeconds(10),
                () -> adapter.generate(new ProviderRequest(
                        UUID.randomUUID(),
                        "attempt-trickled",
                        "trickling",
                        "write a patch",
                        Instant.now().plus(Duration.ofMinutes(2)),
                        () -> true)));
        Duration took = Duration.ofNanos(System.nanoTime() - started);

        assertThat(outcome).isInstanceOf(ProviderOutcome.Unknown.class);
        assertThat(((ProviderOutcome.Unknown) outcome).reason()).contains("no answer within the read timeout");
        assertThat(took).isLessThan(CONNECT_TIMEOUT.plus(READ_TIMEOUT).plusSeconds(1));
        assertThat(bytesTrickled.get()).as("header bytes the server trickled").isGreaterThan(5);
    }
}
