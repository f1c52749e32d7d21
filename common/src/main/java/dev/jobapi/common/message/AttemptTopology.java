package dev.jobapi.common.message;

import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import java.io.IOException;
import java.util.Map;

/**
 * The RabbitMQ objects that carry attempt messages, declared the same way by every process that
 * touches them (api relay, worker, tests), so a message is never published to an exchange with no
 * queue behind it.
 *
 * <pre>
 *   jobs.attempts (direct) --> jobs.attempts (quorum, x-delivery-limit) --dead letters--> jobs.attempts.dlx --> jobs.attempts.dlq
 *   jobs.attempts.delay (classic, TTL) --expired--> jobs.attempts (exchange)
 * </pre>
 */
public final class AttemptTopology {

    public static final String EXCHANGE = "jobs.attempts";
    public static final String QUEUE = "jobs.attempts";
    public static final String ROUTING_KEY = "jobs.attempts";
    public static final String DEAD_LETTER_EXCHANGE = "jobs.attempts.dlx";
    public static final String DEAD_LETTER_QUEUE = "jobs.attempts.dlq";
    public static final String DELAY_QUEUE = "jobs.attempts.delay";

    private AttemptTopology() {}

    /**
     * Declares everything idempotently. Arguments must never change between releases without a
     * migration: RabbitMQ refuses a redeclaration with other arguments.
     *
     * @param deliveryLimit deliveries after which a message is dead-lettered (RabbitMQ 3.10 has no default)
     * @param delayMillis how long a message parked in the delay queue waits before it comes back
     */
    public static void declare(Channel channel, int deliveryLimit, long delayMillis) throws IOException {
        channel.exchangeDeclare(DEAD_LETTER_EXCHANGE, BuiltinExchangeType.FANOUT, true);
        channel.queueDeclare(DEAD_LETTER_QUEUE, true, false, false, Map.of("x-queue-type", "quorum"));
        channel.queueBind(DEAD_LETTER_QUEUE, DEAD_LETTER_EXCHANGE, "");

        channel.exchangeDeclare(EXCHANGE, BuiltinExchangeType.DIRECT, true);
        channel.queueDeclare(
                QUEUE,
                true,
                false,
                false,
                Map.of(
                        "x-queue-type", "quorum",
                        "x-delivery-limit", deliveryLimit,
                        "x-dead-letter-exchange", DEAD_LETTER_EXCHANGE));
        channel.queueBind(QUEUE, EXCHANGE, ROUTING_KEY);

        channel.queueDeclare(
                DELAY_QUEUE,
                true,
                false,
                false,
                Map.of(
                        "x-message-ttl", delayMillis,
                        "x-dead-letter-exchange", EXCHANGE,
                        "x-dead-letter-routing-key", ROUTING_KEY));
    }
}
