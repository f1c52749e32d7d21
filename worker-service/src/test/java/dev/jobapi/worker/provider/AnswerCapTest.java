package dev.jobapi.worker.provider;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * docs/design.md, retry decision table, "answer larger than jobapi.providers.max-answer-bytes": a
 * provider (or anyone answering for its http:// URL) that streams without end fails the attempt at
 * the cap, and the worker reads no more than the cap, so its heap does not grow with the answer.
 */
class AnswerCapTest {

    private static final long ONE_GIB = 1L << 30;
    private static final int CAP = 4 * 1024 * 1024;

    private HttpServer server;
    private final AtomicLong served = new AtomicLong();

    @BeforeEach
    void startAServerThatStreamsOneGibibyte() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/v1/chat/completions", exchange -> {
            exchange.getResponseHeaders().add("Content-Type", "text/event-stream");
            exchange.sendResponseHeaders(200, 0);
            byte[] chunk = new byte[64 * 1024];
            Arrays.fill(chunk, (byte) 'x');
            try (OutputStream body = exchange.getResponseBody()) {
                // One event whose single line never ends: the worst case for a line reader.
                body.write("data: {\"choices\":[{\"delta\":{\"content\":\"".getBytes(StandardCharsets.UTF_8));
                for (long sent = 0; sent < ONE_GIB; sent += chunk.length) {
                    body.write(chunk);
                    served.addAndGet(chunk.length);
                }
            } catch (IOException closedByTheReader) {
                // The worker stopped reading at its cap: what this test wants.
            }
        });
        server.start();
    }

    @AfterEach
    void stopServer() {
        server.stop(0);
    }

    @Test
    void aOneGibibyteStreamedAnswerFailsTheAttemptAtTheCapWithoutRaisingTheHeap() {
        OpenAiCompatibleProvider adapter = TestAdapters.openAi(
                "endless",
                "http://127.0.0.1:" + server.getAddress().getPort(),
                new TestTransport(Duration.ofSeconds(2), Duration.ofSeconds(60), 1, Duration.ofMillis(50), CAP));
        System.gc();
        resetHeapPeaks();
        long before = heapPeak();

        ProviderOutcome outcome = adapter.generate(new ProviderRequest(
                UUID.randomUUID(),
                "attempt-x",
                "endless",
                "write a patch",
                Instant.now().plus(Duration.ofMinutes(2)),
                () -> true));

        long growth = heapPeak() - before;
        assertThat(outcome).isInstanceOf(ProviderOutcome.Failed.class);
        ProviderOutcome.Failed failed = (ProviderOutcome.Failed) outcome;
        assertThat(failed.reason()).contains("answer larger than " + CAP + " bytes");
        assertThat(failed.usageUnknown()).isTrue();
        // The sender is stopped within the cap and what socket buffers held, far from the gibibyte.
        assertThat(served.get()).isLessThan(64L * 1024 * 1024);
        assertThat(growth).as("heap growth while reading").isLessThan(128L * 1024 * 1024);
    }

    private static void resetHeapPeaks() {
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP) {
                pool.resetPeakUsage();
            }
        }
    }

    /** The sum of every heap pool's peak since the last reset: an upper bound of what was live. */
    private static long heapPeak() {
        return ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(pool -> pool.getType() == MemoryType.HEAP)
                .mapToLong(pool -> pool.getPeakUsage().getUsed())
                .sum();
    }
}
