package dev.jobapi.common.testing;

import com.rabbitmq.client.GetResponse;
import dev.jobapi.common.message.AttemptTopology;
import dev.jobapi.common.message.BrokerConnection;
import dev.jobapi.common.message.ConfirmedPublisher;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Reads and empties the attempt queues of the test vhost. */
public final class TestBroker {

    private TestBroker() {}

    public static void purge(BrokerConnection broker) {
        broker.withChannel(channel -> {
            channel.queuePurge(AttemptTopology.QUEUE);
            channel.queuePurge(AttemptTopology.DEAD_LETTER_QUEUE);
            channel.queuePurge(AttemptTopology.DELAY_QUEUE);
            return null;
        });
    }

    /** Takes (and acks) every message now in the queue, returning their bodies. */
    public static List<String> drain(BrokerConnection broker, String queue) {
        return broker.withChannel(channel -> {
            List<String> bodies = new ArrayList<>();
            GetResponse response;
            while ((response = channel.basicGet(queue, true)) != null) {
                bodies.add(new String(response.getBody(), StandardCharsets.UTF_8));
            }
            return bodies;
        });
    }

    /**
     * Takes (auto-acknowledged) at most {@code count} messages from the queue and returns their bodies:
     * what a test knows was there, and nothing a publisher adds meanwhile, which {@link #drain} would
     * take too.
     */
    public static List<String> take(BrokerConnection broker, String queue, int count) {
        return broker.withChannel(channel -> {
            List<String> bodies = new ArrayList<>();
            GetResponse response;
            while (bodies.size() < count && (response = channel.basicGet(queue, true)) != null) {
                bodies.add(new String(response.getBody(), StandardCharsets.UTF_8));
            }
            return bodies;
        });
    }

    /** Messages ready in the queue, by the broker's count. */
    public static long depth(BrokerConnection broker, String queue) {
        return broker.withChannel(
                channel -> (long) channel.queueDeclarePassive(queue).getMessageCount());
    }

    /**
     * Puts every dead letter back on the work queue the way an operator's replay does (the api's
     * DeadLetterQueue): a confirmed copy with its headers first, then the original acked. Returns how
     * many it moved.
     */
    public static int replayDeadLetters(BrokerConnection broker, ConfirmedPublisher publisher) {
        return broker.withChannel(channel -> {
            int replayed = 0;
            GetResponse response;
            while ((response = channel.basicGet(AttemptTopology.DEAD_LETTER_QUEUE, false)) != null) {
                publisher.copyToWorkQueue(response.getProps(), response.getBody());
                channel.basicAck(response.getEnvelope().getDeliveryTag(), false);
                replayed++;
            }
            return replayed;
        });
    }
}
