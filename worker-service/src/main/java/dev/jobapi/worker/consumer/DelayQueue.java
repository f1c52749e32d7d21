package dev.jobapi.worker.consumer;

import com.rabbitmq.client.AMQP;
import dev.jobapi.common.message.AttemptTopology;
import dev.jobapi.common.message.BrokerConnection;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;

/**
 * Parks a message for later: published (with a confirm) to the delay queue, whose TTL sends it back
 * to the work queue. Used when another worker's lease is live, instead of a hot requeue loop.
 */
@ApplicationScoped
public class DelayQueue {

    private final BrokerConnection broker;

    DelayQueue(BrokerConnection broker) {
        this.broker = broker;
    }

    public void park(String body) {
        broker.withChannel(channel -> {
            channel.confirmSelect();
            AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder()
                    .contentType("application/json")
                    .deliveryMode(2)
                    .build();
            channel.basicPublish("", AttemptTopology.DELAY_QUEUE, properties, body.getBytes(StandardCharsets.UTF_8));
            channel.waitForConfirmsOrDie(10_000);
            return null;
        });
    }
}
