package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.rabbitmq.client.Connection;
import dev.jobapi.common.message.AttemptTopology;
import dev.jobapi.common.testing.PrivateRabbitMq;
import dev.jobapi.common.testing.PrivateRabbitMqResource;
import dev.jobapi.common.testing.TestBroker;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.junit.QuarkusTest;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * docs/design.md, "Running clustered": the api takes jobs through a broker outage. Readiness does
 * not follow the broker (intake writes to the outbox, which needs only PostgreSQL), so no api pod
 * leaves its Service; the broker health group reports the outage; the outbox publishes what was
 * accepted once the broker is back. The broker is a node of this test's own, never the machine's.
 */
@QuarkusTest
@QuarkusTestResource(
        value = PrivateRabbitMqResource.class,
        restrictToAnnotatedClass = true,
        initArgs = {
            @ResourceArg(name = "name", value = "jobapi-api-outage"),
            @ResourceArg(name = "port", value = "26672")
        })
class BrokerOutageTest extends ApiTestSupport {

    @Test
    void intakeAndReadinessOutliveABrokerOutageAndTheOutboxPublishesOnceItIsBack() {
        assumeTrue(PrivateRabbitMq.available(), "a private RabbitMQ node needs Debian's rabbitmq-server and root");
        PrivateRabbitMq node = PrivateRabbitMqResource.node();
        management().get("/q/health/group/broker").then().statusCode(200);
        assertThat(sharedConnections(node)).isEqualTo(1);

        node.stopApp();
        try {
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> management().get("/q/health/group/broker").statusCode() == 503);
            management().get("/q/health/ready").then().statusCode(200);
            createJob(Tokens.user("alice"), "k-during-outage", JOB_BODY).then().statusCode(201);
            management().get("/q/health/ready").then().statusCode(200);
            assertThat(count("SELECT count(*) FROM outbox WHERE sent_at IS NULL"))
                    .isEqualTo(1);
        } finally {
            node.startApp();
        }

        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofSeconds(1))
                .until(() -> count("SELECT count(*) FROM outbox WHERE sent_at IS NOT NULL") == 1);
        assertThat(TestBroker.depth(broker, AttemptTopology.QUEUE)).isEqualTo(1);
        management().get("/q/health/group/broker").then().statusCode(200);
        // Replaced, not recovered beside its replacement: one per process, as before the outage.
        assertThat(sharedConnections(node)).isEqualTo(1);
    }

    @Test
    void everyConnectionNegotiatesAShortHeartbeatThroughTheAddressList() throws Exception {
        assumeTrue(PrivateRabbitMq.available(), "a private RabbitMQ node needs Debian's rabbitmq-server and root");
        // The first address refuses (PrivateRabbitMqResource): reaching the node at all takes the list.
        try (Connection connection = broker.newConsumerConnection("heartbeat-probe")) {
            // A node frozen without closing its sockets is noticed in two heartbeats, not RabbitMQ's 60 s.
            assertThat(connection.getHeartbeat()).isEqualTo(5);
        }
    }

    /** The node's connections named as the api's shared connection. */
    private static long sharedConnections(PrivateRabbitMq node) {
        return node.ctl(30, "list_connections", "client_properties")
                .lines()
                .filter(line -> line.contains("jobapi-broker-connection"))
                .count();
    }
}
