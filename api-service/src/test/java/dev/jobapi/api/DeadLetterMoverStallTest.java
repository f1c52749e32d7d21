package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.rabbitmq.client.AMQP;
import dev.jobapi.api.deadletter.DeadLetterMover;
import dev.jobapi.common.message.AttemptTopology;
import dev.jobapi.common.testing.CapturedLog;
import dev.jobapi.common.testing.PrivateRabbitMq;
import dev.jobapi.common.testing.PrivateRabbitMqResource;
import dev.jobapi.common.testing.TestBroker;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * docs/design.md, "Running clustered": the dead-letter mover makes a quiet subscription again, so a
 * consumer the broker stopped serving cannot hold dead letters out of the database while none is
 * ready. The broker's side of the mover's channel is frozen ({@code sys:suspend}, on a node of this
 * test's own): an open channel, a consumer tag, and no delivery.
 */
@QuarkusTest
@TestProfile(DeadLetterMoverStallTest.QuickRenewal.class)
@QuarkusTestResource(
        value = PrivateRabbitMqResource.class,
        restrictToAnnotatedClass = true,
        initArgs = {
            @ResourceArg(name = "name", value = "jobapi-api-mover-stall"),
            @ResourceArg(name = "port", value = "26692")
        })
class DeadLetterMoverStallTest extends ApiTestSupport {

    /** The mover gives a quiet subscription 3 s instead of 60. */
    public static class QuickRenewal implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("jobapi.dead-letters.renew-quiet-after", "3s");
        }
    }

    @Inject
    DeadLetterMover mover;

    @Test
    void deadLettersHeldByASubscriptionTheBrokerStoppedServingReachTheDatabase() {
        assumeTrue(PrivateRabbitMq.available(), "a private RabbitMQ node needs Debian's rabbitmq-server and root");
        await().atMost(Duration.ofSeconds(30)).until(mover::subscribed);
        int published = 5; // under the mover's prefetch (20): the frozen consumer is sent them all
        CapturedLog log = CapturedLog.of(DeadLetterMover.class);
        Supplier<Integer> subscriptions =
                () -> log.messagesStartingWith("Moving dead letters from").size();
        try {
            // An idle subscription is renewed every few seconds here: freeze one just made, so the
            // dead letters go to the frozen channel and not to its successor.
            await().atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> subscriptions.get() > 0);
            String suspended = PrivateRabbitMqResource.node()
                    .eval("{ok, Q} = rabbit_amqqueue:lookup(rabbit_misc:r(<<\"/\">>, queue, <<\""
                            + AttemptTopology.DEAD_LETTER_QUEUE + "\">>)),"
                            + " [sys:suspend(element(1, C)) || C <- rabbit_amqqueue:consumers(Q)].");
            assertThat(suspended.trim()).isEqualTo("[ok]");
            int subscriptionsWhenFrozen = subscriptions.get();
            broker.withChannel(channel -> {
                for (int n = 0; n < published; n++) {
                    channel.basicPublish(
                            "",
                            AttemptTopology.DEAD_LETTER_QUEUE,
                            new AMQP.BasicProperties.Builder()
                                    .messageId("held-" + n)
                                    .deliveryMode(2)
                                    .build(),
                            "not an attempt message".getBytes(StandardCharsets.UTF_8));
                }
                return null;
            });
            await().atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> TestBroker.depth(broker, AttemptTopology.DEAD_LETTER_QUEUE) == 0);

            await().atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(500))
                    .until(() -> subscriptions.get() > subscriptionsWhenFrozen);
        } finally {
            log.close();
            PrivateRabbitMqResource.node().eval("[catch sys:resume(P) || P <- rabbit_channel:list()].");
        }
        await().atMost(Duration.ofSeconds(120))
                .pollInterval(Duration.ofSeconds(1))
                .until(() -> count("SELECT count(*) FROM dead_letter WHERE message_key LIKE 'id:held-%'") == published);
        assertThat(mover.subscribed()).isTrue();
    }
}
