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
 *   jobs.attempts (direct) --> jobs.attempts (quorum, x-delivery-limit) --dead letters--> jobs.attempts.dlx --> jobs.attempts.dead-letters (quorum)
 *   jobs.attempts.parked (quorum, TTL, at-least-once dead lettering) --expired--> jobs.attempts (exchange)
 * </pre>
 *
 * <p>Every queue is a quorum queue, so none of them lives on one node: a classic queue whose home
 * node is down answers every declaration with 404, which would fail readiness, start-up and
 * resubscription across the fleet. Every queue states its delivery limit: RabbitMQ 3.10 has no
 * default (a message loops forever), 4.x defaults to 20 and counts every return, and a queue's
 * arguments cannot change once declared, so nothing may depend on the version's default.
 *
 * <p>Queues replaced in a release keep their old names out of this class's declarations: the
 * classic {@code jobs.attempts.delay} drains itself by TTL into the work queue, and the dead letters
 * of {@code jobs.attempts.dlq} are moved by the api's dead-letter mover.
 */
public final class AttemptTopology {

    public static final String EXCHANGE = "jobs.attempts";
    public static final String QUEUE = "jobs.attempts";
    public static final String ROUTING_KEY = "jobs.attempts";
    public static final String DEAD_LETTER_EXCHANGE = "jobs.attempts.dlx";
    public static final String DEAD_LETTER_QUEUE = "jobs.attempts.dead-letters";
    public static final String DELAY_QUEUE = "jobs.attempts.parked";

    /**
     * Where the processes that write a job's timeline say, after the commit, which jobs changed (a
     * fan-out; each api process binds an exclusive queue of its own to it: JobChangeNotices).
     */
    public static final String JOB_CHANGES_EXCHANGE = "jobs.changes";

    /** The dead-letter queue of releases before the dead letters became rows; moved, never declared. */
    public static final String LEGACY_DEAD_LETTER_QUEUE = "jobs.attempts.dlq";

    /**
     * Deliveries after which a message is dead-lettered. A constant, not a setting: every process
     * must declare the queue with the same arguments or RabbitMQ refuses the declaration.
     */
    public static final int DELIVERY_LIMIT = 5;

    /**
     * The dead-letter queue's limit: its one consumer (the mover) hands a message back only when it
     * could not store it, so only a message no commit can take reaches it; without a limit of its own
     * RabbitMQ 4.x would drop a dead letter after 20 such returns.
     */
    public static final int DEAD_LETTER_DELIVERY_LIMIT = 1_000;

    /** How long a parked message waits before it returns: long enough not to spin, short enough to retry soon. */
    public static final long DELAY_MILLIS = 5_000;

    private AttemptTopology() {}

    /**
     * Declares everything idempotently. Arguments must never change between releases without a
     * new queue: RabbitMQ refuses a redeclaration with other arguments.
     */
    public static void declare(Channel channel) throws IOException {
        channel.exchangeDeclare(JOB_CHANGES_EXCHANGE, BuiltinExchangeType.FANOUT, true);

        channel.exchangeDeclare(DEAD_LETTER_EXCHANGE, BuiltinExchangeType.FANOUT, true);
        channel.queueDeclare(
                DEAD_LETTER_QUEUE,
                true,
                false,
                false,
                Map.of("x-queue-type", "quorum", "x-delivery-limit", DEAD_LETTER_DELIVERY_LIMIT));
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

        // Nobody consumes it: the TTL returns each message to the work queue. At-least-once dead
        // lettering (which needs reject-publish overflow) keeps an expiring message until the work
        // queue confirmed it, so a node lost mid-expiry loses nothing.
        channel.queueDeclare(
                DELAY_QUEUE,
                true,
                false,
                false,
                Map.of(
                        "x-queue-type", "quorum",
                        "x-delivery-limit", DELIVERY_LIMIT,
                        "x-message-ttl", DELAY_MILLIS,
                        "x-overflow", "reject-publish",
                        "x-dead-letter-strategy", "at-least-once",
                        "x-dead-letter-exchange", EXCHANGE,
                        "x-dead-letter-routing-key", ROUTING_KEY));
    }
}
