package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.jobapi.common.testing.LateDatabaseResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

/**
 * docs/design.md, "Running clustered": a process started while the database is away waits for it
 * (Flyway's connect retries) instead of exiting, which on Kubernetes would be a CrashLoopBackOff
 * outlasting the outage. The application under test starts behind a proxy that turns every
 * connection away at first; that this test runs at all is the application having
 * started.
 */
@QuarkusTest
@QuarkusTestResource(value = LateDatabaseResource.class, restrictToAnnotatedClass = true)
class StartWhileTheDatabaseIsAwayTest extends ApiTestSupport {

    @Test
    void theApiStartedWhileTheDatabaseWasAwayIsReadyOnceItIsBack() {
        assertThat(LateDatabaseResource.turnedAway()).isEqualTo(LateDatabaseResource.AWAY);
        management().get("/q/health/ready").then().statusCode(200);
    }
}
