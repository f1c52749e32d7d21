package dev.jobapi.common.message;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import java.lang.reflect.Proxy;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * docs/design.md, "Messages and queues": every queue the project declares survives the loss of a
 * node and behaves the same on RabbitMQ 3.10 and 4.x. A classic queue lives on one node (with it
 * down, every declaration of it fails with 404 and takes readiness, start-up and resubscription
 * with it); a queue without its own delivery limit gets none on 3.10 and 20 on 4.x.
 */
class AttemptTopologyTest {

    @Test
    void everyQueueIsAQuorumQueueWithADeliveryLimitOfItsOwn() throws Exception {
        Map<String, Map<String, Object>> queues = declaredQueues();

        assertThat(queues)
                .containsOnlyKeys(
                        AttemptTopology.QUEUE, AttemptTopology.DELAY_QUEUE, AttemptTopology.DEAD_LETTER_QUEUE);
        queues.forEach((queue, arguments) -> {
            assertThat(arguments).as(queue).containsEntry("x-queue-type", "quorum");
            assertThat(arguments).as(queue).containsKey("x-delivery-limit");
        });
    }

    @Test
    void aParkedMessageIsKeptUntilTheWorkQueueConfirmedItsReturn() throws Exception {
        Map<String, Object> parked = declaredQueues().get(AttemptTopology.DELAY_QUEUE);

        assertThat(parked)
                .containsEntry("x-message-ttl", AttemptTopology.DELAY_MILLIS)
                .containsEntry("x-dead-letter-exchange", AttemptTopology.EXCHANGE)
                .containsEntry("x-dead-letter-routing-key", AttemptTopology.ROUTING_KEY)
                // at-least-once dead lettering exists only with reject-publish overflow
                .containsEntry("x-dead-letter-strategy", "at-least-once")
                .containsEntry("x-overflow", "reject-publish");
    }

    /** The queues {@link AttemptTopology#declare} declares, with their arguments, on a channel that records. */
    @SuppressWarnings("unchecked")
    private static Map<String, Map<String, Object>> declaredQueues() throws Exception {
        Map<String, Map<String, Object>> queues = new LinkedHashMap<>();
        Channel recording = (Channel) Proxy.newProxyInstance(
                Channel.class.getClassLoader(), new Class<?>[] {Channel.class}, (proxy, method, args) -> {
                    if (method.getName().equals("queueDeclare") && args != null && args.length == 5) {
                        queues.put((String) args[0], (Map<String, Object>) args[4]);
                    }
                    return null;
                });
        AttemptTopology.declare(recording);
        return queues;
    }
}
