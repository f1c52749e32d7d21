package dev.jobapi.bench;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A server that stalls once for a second, driven for two seconds: the open loop must charge the
 * stall to every request that was due during it, the closed loop hides it in one sample.
 */
class CoordinatedOmissionTest {

    private static final long STALL_MILLIS = 1000;

    private HttpServer server;
    private final AtomicInteger answered = new AtomicInteger();

    @BeforeEach
    void startServerThatStallsOnItsTenthRequest() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/jobs", exchange -> {
            if (answered.incrementAndGet() == 10) {
                try {
                    Thread.sleep(STALL_MILLIS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            exchange.getRequestBody().readAllBytes();
            exchange.sendResponseHeaders(201, -1);
            exchange.close();
        });
        server.start();
    }

    @AfterEach
    void stopServer() {
        server.stop(0);
    }

    @Test
    void openLoopCountsTheStallForEveryRequestDueDuringIt() throws Exception {
        Measurement.Result result = run("open");
        // 100 of the 200 requests were due during the stall: their latencies spread from 1 s to 0.
        assertTrue(result.latencies().getValueAtPercentile(75) >= 250_000, result.line());
        assertTrue(result.latencies().getValueAtPercentile(99) >= 900_000, result.line());
    }

    @Test
    void closedLoopSeesTheStallOnlyOnce() throws Exception {
        Measurement.Result result = run("closed");
        assertTrue(result.latencies().getMaxValue() >= 900_000, result.line());
        assertTrue(result.latencies().getValueAtPercentile(90) < 100_000, result.line());
    }

    private Measurement.Result run(String mode) throws Exception {
        Options options = Options.parse(
                new String[] {
                    "--url", "http://127.0.0.1:" + server.getAddress().getPort(),
                    "--mode", mode,
                    "--rate", "100",
                    "--concurrency", "1",
                    "--warmup", "0",
                    "--duration", "2"
                },
                Map.of("BENCH_TOKEN", "test-token"));
        HttpClient client =
                HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        Scenario scenario = Scenario.of(options, client);
        return mode.equals("open")
                ? OpenLoop.run(options, client, scenario)
                : ClosedLoop.run(options, client, scenario);
    }
}
