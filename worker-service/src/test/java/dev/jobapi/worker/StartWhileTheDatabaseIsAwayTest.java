package dev.jobapi.worker;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import dev.jobapi.common.testing.LateDatabaseResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.Test;

/**
 * docs/design.md, "Running clustered": a worker started while the database is away waits for it
 * (Flyway's connect retries) instead of exiting. It starts behind a proxy that turns its first
 * connections away; that this test runs at all is the worker having started.
 */
@QuarkusTest
@QuarkusTestResource(value = LateDatabaseResource.class, restrictToAnnotatedClass = true)
class StartWhileTheDatabaseIsAwayTest {

    @Test
    void theWorkerStartedWhileTheDatabaseWasAwayIsReadyOnceItIsBack() {
        assertThat(LateDatabaseResource.turnedAway()).isEqualTo(LateDatabaseResource.AWAY);
        int port = ConfigProvider.getConfig().getValue("quarkus.management.test-port", Integer.class);
        given().port(port).get("/q/health/started").then().statusCode(200);
    }
}
