package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import dev.jobapi.api.contract.OutsideTheContract;
import io.agroal.api.AgroalDataSource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.awaitility.Awaitility;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.Test;

/**
 * The connection pool under a crowd (issue 31): a request that gets no connection in time is a 503
 * with Retry-After, never a 500; and pages of jobs take at most their share of the pool, so
 * readiness, the relay and everyone else keep theirs while pages wait.
 */
@QuarkusTest
@OutsideTheContract("the 503s of a pool under load are not in the document's examples")
class LoadSheddingTest extends ApiTestSupport {

    @Inject
    AgroalDataSource pool;

    @Test
    void aRequestThatGetsNoConnectionInTimeIsA503WithRetryAfterNotA500() throws SQLException {
        String alice = Tokens.user("alice");
        List<Connection> taken = new ArrayList<>();
        try {
            // Every connection of the pool (20), held by the test.
            for (int i = 0; i < 20; i++) {
                taken.add(pool.getConnection());
            }
            Response answer = as(alice).get("/jobs/" + UUID.randomUUID());
            answer.then()
                    .statusCode(503)
                    .contentType("application/problem+json")
                    .header("Retry-After", "2")
                    .body("code", equalTo("server-busy"));
            assertThat(answer.asString()).doesNotContain("Exception").doesNotContain("at dev.jobapi");
        } finally {
            for (Connection connection : taken) {
                connection.close();
            }
        }
        as(alice).get("/jobs/" + UUID.randomUUID()).then().statusCode(404);
    }

    @Test
    void pagesOfJobsWaitingOnTheDatabaseTakeAtMostTheirShareOfThePoolAndReadinessKeepsItsConnection() throws Exception {
        String alice = Tokens.user("alice");
        createJob(alice, "one", JOB_BODY).then().statusCode(201);
        String url = ConfigProvider.getConfig().getValue("quarkus.datasource.jdbc.url", String.class);
        ExecutorService clients = Executors.newFixedThreadPool(40);
        // A lock no page can pass: every page that reaches the database waits there, holding its connection.
        try (Connection lock = DriverManager.getConnection(url, "jobapi", "jobapi")) {
            lock.setAutoCommit(false);
            lock.createStatement().execute("LOCK TABLE job IN ACCESS EXCLUSIVE MODE");
            List<Future<Response>> pages = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                pages.add(clients.submit(() -> as(alice).get("/jobs")));
            }
            // Pages past their share (8) are shed after a second's wait, not queued for the pool.
            Awaitility.await()
                    .atMost(Duration.ofSeconds(4))
                    .until(() -> pages.stream().filter(Future::isDone).count() >= 32);
            // Twelve connections are left to everyone else: readiness asks the database and is up.
            management().get("/q/health/ready").then().statusCode(200);
            lock.rollback();
            int shed = 0;
            for (Future<Response> page : pages) {
                Response answer = page.get();
                assertThat(answer.statusCode()).isIn(200, 503);
                if (answer.statusCode() == 503) {
                    shed++;
                    assertThat(answer.header("Retry-After")).isEqualTo("2");
                    assertThat(answer.path("code").toString()).isEqualTo("server-busy");
                }
            }
            assertThat(shed).isEqualTo(32);
        } finally {
            clients.shutdownNow();
        }
    }
}
