package dev.jobapi.common.message;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.ShutdownSignalException;
import java.io.IOException;
import java.time.Duration;
import org.jboss.logging.Logger;

/**
 * One subscription to a queue on a connection of its own, with manual acknowledgement: its
 * connection, channel and consumer tag, and whether the broker ended it. Each subscription keeps its
 * own state, so a late signal from one already replaced (its connection's shutdown arriving after
 * the new subscription started) never marks the new one ended. Its owner runs a loop that asks
 * {@link #live()} and opens a new one when it is not.
 */
public final class Subscription {

    private static final Logger LOG = Logger.getLogger(Subscription.class);

    private static final int CLOSE_TIMEOUT_MS = 5_000;

    /** What to do with each delivery, on the connection's delivery thread. */
    @FunctionalInterface
    public interface Deliveries {
        void deliver(Channel channel, Envelope envelope, AMQP.BasicProperties properties, byte[] body)
                throws IOException;
    }

    /** Declares the queue to subscribe to on the subscription's own channel and names it. */
    @FunctionalInterface
    public interface QueueDeclaration {
        String declare(Channel channel) throws IOException;
    }

    private final Connection connection;
    private final Channel channel;
    private volatile String tag;
    private volatile boolean ended;
    /** When the subscription opened or a delivery's handling began or ended ({@link System#nanoTime}). */
    private volatile long lastActivity = System.nanoTime();
    /** Whether the connection's delivery thread is handling a delivery now. */
    private volatile boolean delivering;

    private Subscription(Connection connection, Channel channel) {
        this.connection = connection;
        this.channel = channel;
    }

    /**
     * Connects, sets the prefetch and subscribes. A broker that ends the subscription (its queue
     * deleted, its connection lost) is logged once with {@code name} and makes {@link #live()} false.
     */
    public static Subscription open(
            BrokerConnection broker, String name, String queue, int prefetch, Deliveries deliveries)
            throws IOException {
        return open(broker, name, channel -> queue, prefetch, deliveries);
    }

    /**
     * Like the other, to a queue declared on the subscription's own connection: an exclusive queue
     * there lives exactly as long as the subscription.
     */
    public static Subscription open(
            BrokerConnection broker, String name, QueueDeclaration declaration, int prefetch, Deliveries deliveries)
            throws IOException {
        Connection connection = broker.newConsumerConnection(name);
        try {
            Channel channel = connection.createChannel();
            String queue = declaration.declare(channel);
            channel.basicQos(prefetch);
            Subscription subscription = new Subscription(connection, channel);
            subscription.tag = channel.basicConsume(queue, false, subscription.new Consumer(name, queue, deliveries));
            return subscription;
        } catch (IOException | RuntimeException e) {
            connection.abort(CLOSE_TIMEOUT_MS);
            throw e;
        }
    }

    /** Whether the broker still delivers to this subscription, as far as this process can tell. */
    public boolean live() {
        return !ended && tag != null && channel.isOpen();
    }

    /**
     * Whether nothing was delivered for {@code quiet} and no delivery is being handled: its owner may
     * close it without taking a message from anyone. A subscription the broker stopped serving looks
     * exactly like this, whatever it holds.
     */
    public boolean quietFor(Duration quiet) {
        return !delivering && System.nanoTime() - lastActivity >= quiet.toNanos();
    }

    /** Cancels the consumer and waits for the broker's cancel-ok: no delivery comes after it. */
    public void cancel() {
        if (live()) {
            try {
                channel.basicCancel(tag);
            } catch (IOException | RuntimeException e) {
                LOG.debugf("Cancelling the consumer failed (its channel is going anyway): %s", e);
            }
        }
        ended = true;
    }

    /** Closes the connection; the broker returns every delivery not yet acknowledged. */
    public void close() {
        ended = true;
        try {
            if (connection.isOpen()) {
                connection.close(CLOSE_TIMEOUT_MS);
            }
        } catch (IOException | RuntimeException e) {
            LOG.debugf("Closing the consumer connection failed: %s", e);
            connection.abort(CLOSE_TIMEOUT_MS);
        }
    }

    private final class Consumer extends DefaultConsumer {
        private final String name;
        private final String queue;
        private final Deliveries deliveries;

        Consumer(String name, String queue, Deliveries deliveries) {
            super(channel);
            this.name = name;
            this.queue = queue;
            this.deliveries = deliveries;
        }

        @Override
        public void handleDelivery(String consumerTag, Envelope envelope, AMQP.BasicProperties properties, byte[] body)
                throws IOException {
            delivering = true;
            lastActivity = System.nanoTime();
            try {
                deliveries.deliver(getChannel(), envelope, properties, body);
            } finally {
                lastActivity = System.nanoTime();
                delivering = false;
            }
        }

        @Override
        public void handleCancel(String consumerTag) {
            LOG.warnf("RabbitMQ cancelled %s's consumer of %s (queue deleted?); subscribing again", name, queue);
            ended = true;
        }

        @Override
        public void handleShutdownSignal(String consumerTag, ShutdownSignalException signal) {
            if (!ended) {
                LOG.warnf("%s's connection closed, subscribing again: %s", name, signal.getMessage());
            }
            ended = true;
        }
    }
}
