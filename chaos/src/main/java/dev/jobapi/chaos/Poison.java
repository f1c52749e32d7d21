package dev.jobapi.chaos;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The deliberately poisoned messages: bodies that are not attempt messages at all, published straight to the
 * work queue of the soak's broker (through the default exchange, mandatory and confirmed). Every worker fails
 * on them, so each must end in the dead-letter queue after the delivery limit, and they are the only messages
 * the DLQ may hold after the drain. Each body carries the marker {@link #MARKER} and the run's seed.
 */
final class Poison {

    static final String MARKER = "chaos-poison";

    private Poison() {}

    /** The body of the {@code n}th poison message of a run: recognisable, and never valid JSON. */
    static String body(long seed, int n) {
        return MARKER + " " + seed + "-" + n + ": this is not an attempt message {";
    }

    static boolean isPoison(String body) {
        return body != null && body.startsWith(MARKER + " ");
    }

    /**
     * Publishes {@code count} poison messages to {@code queue}; returns the bodies the broker confirmed and did
     * not return as unroutable (a message returned never reached the queue, so no DLQ has to hold it).
     */
    static List<String> publish(URI amqp, String queue, long seed, int count) throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setUri(amqp);
        factory.setConnectionTimeout(5_000);
        Set<String> returned = ConcurrentHashMap.newKeySet();
        List<String> published = new ArrayList<>();
        try (Connection connection = factory.newConnection("chaos-poison");
                Channel channel = connection.createChannel()) {
            channel.confirmSelect();
            channel.addReturnListener(r -> returned.add(new String(r.getBody(), StandardCharsets.UTF_8)));
            for (int n = 1; n <= count; n++) {
                String body = body(seed, n);
                AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder()
                        .contentType("text/plain")
                        .deliveryMode(2)
                        .headers(Map.of("x-chaos-poison", seed + "-" + n))
                        .build();
                channel.basicPublish("", queue, true, properties, body.getBytes(StandardCharsets.UTF_8));
                published.add(body);
            }
            channel.waitForConfirmsOrDie(10_000);
        }
        published.removeAll(returned);
        return published;
    }
}
