package dev.jobapi.api;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Readiness follows the broker: stopping RabbitMQ makes the api not ready, starting it again makes
 * it ready. Runs in its own profile, so the application that lived through the outage is discarded.
 */
@QuarkusTest
@TestProfile(BrokerOutageTest.OwnApplication.class)
class BrokerOutageTest {

    /** A profile of its own: Quarkus starts a fresh application for this class only. */
    public static class OwnApplication implements QuarkusTestProfile {}

    private static void rabbitmqctl(String command) throws Exception {
        Process process = new ProcessBuilder("rabbitmqctl", command).inheritIO().start();
        if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
            throw new IllegalStateException("rabbitmqctl " + command + " failed");
        }
    }

    @Test
    void readinessGoesDownWhenRabbitMqStopsAndComesBackWhenItStarts() throws Exception {
        // The broker is the machine's own, controllable only where rabbitmqctl is (bin/dev installs it).
        assumeTrue(Files.isExecutable(Path.of("/usr/sbin/rabbitmqctl")), "rabbitmqctl is not installed here");
        ApiTestSupport.management().get("/q/health/ready").then().statusCode(200);
        rabbitmqctl("stop_app");
        try {
            await().atMost(Duration.ofSeconds(30))
                    .until(() ->
                            ApiTestSupport.management().get("/q/health/ready").statusCode() == 503);
        } finally {
            rabbitmqctl("start_app");
        }
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofSeconds(1))
                .until(() -> ApiTestSupport.management().get("/q/health/ready").statusCode() == 200);
    }
}
