package dev.jobapi.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.rabbitmq.client.AMQP;
import dev.jobapi.common.message.AttemptTopology;
import dev.jobapi.common.message.BrokerConnection;
import dev.jobapi.common.testing.PrivateRabbitMq;
import dev.jobapi.common.testing.PrivateRabbitMqResource;
import dev.jobapi.common.testing.TestBroker;
import dev.jobapi.worker.consumer.AttemptConsumer;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * docs/design.md, "Running clustered": a subscription the broker silently stopped serving is
 * noticed and made again. RabbitMQ 3.10 can leave a consumer attached to nothing when a quorum queue
 * is deleted and declared again in the same instant; here the broker's side of the consumer's
 * channel is frozen ({@code sys:suspend}, on a node of this test's own), which looks the same to the
 * worker: an open channel, a consumer tag, and no delivery while the queue holds ready messages.
 */
@QuarkusTest
@TestProfile(ConsumerStallTest.QuickStall.class)
@QuarkusTestResource(
        value = PrivateRabbitMqResource.class,
        restrictToAnnotatedClass = true,
        initArgs = {
            @ResourceArg(name = "name", value = "jobapi-worker-stall"),
            @ResourceArg(name = "port", value = "26682")
        })
class ConsumerStallTest {

    /** The consumer gives a silent subscription 3 s instead of 30. */
    public static class QuickStall implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("jobapi.worker.stall-after", "3s");
        }
    }

    @Inject
    AttemptConsumer consumer;

    @Inject
    BrokerConnection broker;

    @Test
    void aSubscriptionTheBrokerStoppedServingIsMadeAgainAndWhatItHeldIsWorked() {
        assumeTrue(PrivateRabbitMq.available(), "a private RabbitMQ node needs Debian's rabbitmq-server and root");
        await().atMost(Duration.ofSeconds(30)).until(consumer::subscribed);
        String suspended = PrivateRabbitMqResource.node()
                .eval("[sys:suspend(P) || P <- rabbit_channel:list(),"
                        + " proplists:get_value(consumer_count, rabbit_channel:info(P, [consumer_count])) > 0].");
        assertThat(suspended.trim()).isEqualTo("[ok]");

        // More than one prefetch window (32), none of them an attempt message: each is dead-lettered
        // by whichever subscription receives it, which makes every delivery visible.
        int published = 40;
        broker.withChannel(channel -> {
            for (int n = 0; n < published; n++) {
                channel.basicPublish(
                        "",
                        AttemptTopology.QUEUE,
                        new AMQP.BasicProperties.Builder().deliveryMode(2).build(),
                        ("not an attempt message " + n).getBytes(StandardCharsets.UTF_8));
            }
            return null;
        });

        // Only a new subscription can deliver while the old channel is suspended: a first dead letter
        // says the worker subscribed again.
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofSeconds(1))
                .until(() -> TestBroker.depth(broker, AttemptTopology.DEAD_LETTER_QUEUE) > 0);
        // The worker closed the old channel; a suspended channel process cannot finish that close, so
        // whatever it had been sent stays with it (CI at 1e3ace0: 7 of 40, twice). Resumed, it closes
        // as a stalled channel's close completes in the broker, and hands them back.
        PrivateRabbitMqResource.node().eval("[catch sys:resume(P) || P <- rabbit_channel:list()].");
        await().atMost(Duration.ofSeconds(120))
                .pollInterval(Duration.ofSeconds(1))
                .until(() -> TestBroker.depth(broker, AttemptTopology.DEAD_LETTER_QUEUE) == published);
        assertThat(consumer.subscribed()).isTrue();
    }
}
