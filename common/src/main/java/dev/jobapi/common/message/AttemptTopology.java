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

    /**
     * Deliveries after which a message is dead-lettered. RabbitMQ 3.10 sets no default, so without
     * this a poison message loops forever. A constant, not a setting: every process must declare the
     * queue with the same arguments or RabbitMQ refuses the declaration.
     */
    public static final int DELIVERY_LIMIT = 5;

    /** How long a parked message waits before it returns: long enough not to spin, short enough to retry soon. */
    public static final long DELAY_MILLIS = 5_000;

    private AttemptTopology() {}

    /**
     * Declares everything idempotently. Arguments must never change between releases without a
     * migration: RabbitMQ refuses a redeclaration with other arguments.
     */
    public static void declare(Channel channel) throws IOException {
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
                        "x-delivery-limit", DELIVERY_LIMIT,
                        "x-dead-letter-exchange", DEAD_LETTER_EXCHANGE));
        channel.queueBind(QUEUE, EXCHANGE, ROUTING_KEY);

        channel.queueDeclare(
                DELAY_QUEUE,
                true,
                false,
                false,
                Map.of(
                        "x-message-ttl", DELAY_MILLIS,
                        "x-dead-letter-exchange", EXCHANGE,
                        "x-dead-letter-routing-key", ROUTING_KEY));
    }
}
