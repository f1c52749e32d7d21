package dev.jobapi.worker;

import dev.jobapi.common.testing.ConnectionStorm;
import dev.jobapi.common.testing.SlowConnectDatabaseResource;
import io.agroal.api.AgroalDataSource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

/** The worker's own datasource settings, under {@link ConnectionStorm}'s storm of slow connects. */
@QuarkusTest
@QuarkusTestResource(value = SlowConnectDatabaseResource.class, restrictToAnnotatedClass = true)
class ConnectionStormTest {

    @Inject
    AgroalDataSource dataSource;

    @Test
    void anEmptiedPoolRefillsWithoutThrowingConnectsAway() throws InterruptedException {
        ConnectionStorm.assertAnEmptiedPoolRefillsWithoutThrowingConnectsAway(dataSource);
    }
}
