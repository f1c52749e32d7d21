package dev.jobapi.api;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.not;

import dev.jobapi.common.message.AttemptTopology;
import io.quarkus.scheduler.Scheduler;
import io.quarkus.scheduler.Trigger;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.Test;

/**
 * Readiness is the api's own (database, background loops), never the broker's: intake works through
 * a broker outage. The broker health group reflects the broker really working, not just a
 * connection that reconnected.
 */
@QuarkusTest
class HealthTest extends ApiTestSupport {

    @Test
    void readyWhenTheDatabaseAnswersAndTheBrokerIsReportedInAGroupOfItsOwn() {
        management()
                .get("/q/health/ready")
                .then()
                .statusCode(200)
                .body("status", equalTo("UP"))
                .body("checks.name", not(hasItem("rabbitmq-attempt-queue")));
        management()
                .get("/q/health/group/broker")
                .then()
                .statusCode(200)
                .body("checks.name", hasItem("rabbitmq-attempt-queue"));
        await().atMost(Duration.ofSeconds(10))
                .until(() -> management().get("/q/metrics").asString().contains("jobapi_broker_connected 1.0"));
    }

    @Inject
    Scheduler scheduler;

    @Test
    void theRetentionPrunerIsAScheduledJobWhoseHeartbeatLivenessReads() {
        Trigger pruner = scheduler.getScheduledJob("retention-pruner");
        Assertions.assertThat(pruner).isNotNull();
        // The first prune waits one interval (1 h): a restart loop never prunes on every start.
        Assertions.assertThat(pruner.getNextFireTime())
                .isAfter(java.time.Instant.now().plus(Duration.ofMinutes(50)));
        Assertions.assertThat(scheduler.getScheduledJob("metrics-refresher")).isNotNull();
        management()
                .get("/q/health/live")
                .then()
                .statusCode(200)
                .body("checks.find { it.name == 'background-loops' }.status", equalTo("UP"))
                .body(
                        "checks.find { it.name == 'background-loops' }.data.keySet()",
                        hasItem("retention-pruner-last-round-ms-ago"));
    }

    @Test
    void theBrokerCheckRedeclaresAQueueTheBrokerLost() {
        broker.withChannel(channel -> channel.queueDelete(AttemptTopology.QUEUE));
        management().get("/q/health/group/broker").then().statusCode(200);
        // The queue is back with its arguments, so the relay's next publish is routed, not dropped.
        broker.withChannel(channel -> channel.queueDeclarePassive(AttemptTopology.QUEUE));
    }

    @Test
    void theBrokerCheckIsDownWhileTheBrokerRefusesTheTopologyAndReadinessStaysUp() {
        // A queue of the same name with other arguments: RabbitMQ refuses the check's redeclaration.
        broker.withChannel(channel -> channel.queueDelete(AttemptTopology.QUEUE));
        broker.withChannel(channel -> channel.queueDeclare(AttemptTopology.QUEUE, true, false, false, null));
        try {
            management()
                    .get("/q/health/group/broker")
                    .then()
                    .statusCode(503)
                    .body("checks.find { it.name == 'rabbitmq-attempt-queue' }.status", equalTo("DOWN"));
            management().get("/q/health/ready").then().statusCode(200);
        } finally {
            broker.withChannel(channel -> channel.queueDelete(AttemptTopology.QUEUE));
        }
        management().get("/q/health/group/broker").then().statusCode(200);
    }

    @Test
    void healthAndMetricsAreNotServedOnThePublicPort() {
        given().get("/q/metrics").then().statusCode(404);
        given().get("/q/health/ready").then().statusCode(404);
        given().get("/q/health").then().statusCode(404);
        management().get("/q/health/live").then().statusCode(200);
    }

    @Test
    void metricsAndOpenApiAreServed() {
        management().get("/q/metrics").then().statusCode(200);
        given().get("/q/openapi?format=json")
                .then()
                .statusCode(200)
                .body("info.description", org.hamcrest.Matchers.containsString("Key retention"))
                .body("info.description", org.hamcrest.Matchers.containsString("10,000 JSON values"))
                .body("paths", org.hamcrest.Matchers.hasKey("/jobs/{id}/attempts"))
                .body("paths", org.hamcrest.Matchers.hasKey("/admin/dlq/replay"))
                // Problem codes and examples are part of the contract a client reads.
                .body(
                        "paths.'/jobs'.post.responses.'422'.description",
                        org.hamcrest.Matchers.containsString("idempotency-key-reused"))
                .body(
                        "paths.'/jobs/{id}/attempts'.post.responses.'409'.description",
                        org.hamcrest.Matchers.containsString("review-required"))
                .body("paths.'/admin/audit'.get.responses.'403'.description", org.hamcrest.Matchers.notNullValue())
                .body("paths.'/jobs/{id}'.get.responses.'401'.description", org.hamcrest.Matchers.notNullValue())
                .body(
                        "paths.'/jobs'.post.requestBody.content.'application/json'.examples.example.value.provider",
                        equalTo("fake-a"));
    }
}
