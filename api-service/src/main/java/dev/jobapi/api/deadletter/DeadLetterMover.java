package dev.jobapi.api.deadletter;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.ShutdownSignalException;
import dev.jobapi.api.config.JobApiConfig;
import dev.jobapi.common.health.BackgroundLoops;
import dev.jobapi.common.message.AttemptTopology;
import dev.jobapi.common.message.BrokerConnection;
import dev.jobapi.common.message.ConfirmedPublisher;
import dev.jobapi.common.message.Subscription;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.Scheduled.ConcurrentExecution;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jboss.logging.Logger;

/**
 * Moves dead letters from the broker into PostgreSQL (docs/design.md, rule 13; issue 30). It
 * consumes {@link AttemptTopology#DEAD_LETTER_QUEUE} on a connection of its own, like the worker's
 * consumer: a lost connection or a cancelled consumer is noticed by a loop that subscribes again.
 *
 * <ul>
 *   <li>Each message is stored by {@link DeadLetterStore} in one transaction and acknowledged only
 *       after it committed: a crash or a failed commit leaves the message on the broker, which
 *       delivers it again; its row is keyed by the message, so the redelivery makes no second row.
 *   <li>A store that fails is tried again a few times while the message is held (no delivery is
 *       counted), then handed back with a nack; the queue's own delivery limit ({@link
 *       AttemptTopology#DEAD_LETTER_DELIVERY_LIMIT}) is far above what an outage of the database
 *       spends.
 *   <li>An attempt message the broker dropped at the work queue's delivery limit ({@code
 *       delivery_limit}) while its attempt still has work left was not failed by the worker (which
 *       rejects with {@code rejected} after its own counted failures): on a quorum queue every lost
 *       consumer connection counts as a delivery. It goes back to the work queue as a fresh copy,
 *       counted on the attempt, and only the drop after {@link DeadLetterStore#MAX_RETURNS} returns is
 *       stored (a message that kills its worker is never counted by the worker).
 *   <li>At start, dead letters still in the previous release's {@link
 *       AttemptTopology#LEGACY_DEAD_LETTER_QUEUE} are moved the same way; that queue is then
 *       unbound and deleted once empty.
 * </ul>
 */
@ApplicationScoped
public class DeadLetterMover {

    private static final Logger LOG = Logger.getLogger(DeadLetterMover.class);

    /** The subscription loop's scheduler identity and heartbeat name. */
    private static final String LOOP = "dead-letter-mover";

    /** Messages held at once: the mover stores one at a time, so a small window is enough. */
    private static final int PREFETCH = 20;

    /** Tries of one store while its message is held, before it is handed back. */
    private static final int STORE_TRIES = 3;

    private final BrokerConnection broker;
    private final ConfirmedPublisher publisher;
    private final DeadLetterStore store;
    private final BackgroundLoops loops;
    private final ObjectMapper mapper;
    private final Duration renewQuietAfter;

    private volatile Subscription subscription;
    private volatile boolean stopping;
    private volatile boolean legacyMoved;

    DeadLetterMover(
            BrokerConnection broker,
            ConfirmedPublisher publisher,
            DeadLetterStore store,
            BackgroundLoops loops,
            ObjectMapper mapper,
            JobApiConfig config) {
        this.broker = broker;
        this.publisher = publisher;
        this.store = store;
        this.loops = loops;
        this.mapper = mapper;
        this.renewQuietAfter = config.deadLetters().renewQuietAfter();
    }

    void start(@Observes StartupEvent event) {
        loops.expect(LOOP, Duration.ofSeconds(2), Duration.ofSeconds(60));
        subscribeIfNeeded();
    }

    /** The subscription loop: every 2 s, a lost subscription is made again. */
    @Scheduled(
            identity = LOOP,
            every = "2s",
            delayed = "2s",
            concurrentExecution = ConcurrentExecution.SKIP,
            skipExecutionIf = BackgroundLoops.class)
    void scheduledSubscription() {
        loops.round(LOOP, this::subscribeIfNeeded);
    }

    void stop(@Observes @Priority(1) ShutdownEvent event) {
        stopping = true;
        synchronized (this) {
            closeQuietly();
        }
    }

    /**
     * Subscribes when not subscribed, and again when the subscription has received nothing for
     * {@code jobapi.dead-letters.renew-quiet-after} with nothing in hand: a consumer RabbitMQ 3.10 left attached to
     * nothing holds its dead letters, unacknowledged, until its connection closes (the worker's
     * consumer does the same; docs/design.md, "Running clustered"). First moves what the legacy
     * queue still holds.
     */
    public synchronized void subscribeIfNeeded() {
        if (stopping) {
            return;
        }
        Subscription current = subscription;
        if (current != null && current.live()) {
            if (!current.quietFor(renewQuietAfter)) {
                return;
            }
            LOG.debugf("Received no dead letter for %d s; subscribing again", renewQuietAfter.toSeconds());
        }
        closeQuietly();
        try {
            broker.declareTopology();
            if (!legacyMoved) {
                moveLegacyDeadLetters();
            }
            subscription = Subscription.open(
                    broker, "jobapi-dead-letter-mover", AttemptTopology.DEAD_LETTER_QUEUE, PREFETCH, this::received);
            LOG.infof("Moving dead letters from %s into the database", AttemptTopology.DEAD_LETTER_QUEUE);
        } catch (IOException | RuntimeException e) {
            LOG.warnf("Could not subscribe to %s, retrying: %s", AttemptTopology.DEAD_LETTER_QUEUE, e.toString());
        }
    }

    /** Whether the broker is delivering dead letters to this mover now. */
    public boolean subscribed() {
        Subscription current = subscription;
        return current != null && current.live();
    }

    /**
     * Moves every message of the previous release's dead-letter queue into the table, then unbinds
     * that queue from the dead-letter exchange and deletes it if empty. Runs before the first
     * subscription; returns how many messages it moved (0 when there is no such queue).
     */
    public int moveLegacyDeadLetters() {
        String legacy = AttemptTopology.LEGACY_DEAD_LETTER_QUEUE;
        AtomicBoolean missing = new AtomicBoolean();
        try {
            // A throwaway channel: a passive declaration of a missing queue closes its channel (404).
            broker.withChannel(ch -> {
                try {
                    ch.queueDeclarePassive(legacy);
                } catch (IOException e) {
                    if (!notFound(e)) {
                        throw e;
                    }
                    missing.set(true);
                }
                return null;
            });
        } catch (RuntimeException e) {
            if (!missing.get()) {
                throw e; // the broker is away: the next round asks again
            }
        }
        if (missing.get()) {
            legacyMoved = true;
            return 0;
        }
        int moved = broker.withChannel(ch -> {
            // Nothing new arrives once unbound; the new queue is bound to the same fanout exchange.
            ch.queueUnbind(legacy, AttemptTopology.DEAD_LETTER_EXCHANGE, "");
            int n = 0;
            GetResponse response;
            while (!stopping && (response = ch.basicGet(legacy, false)) != null) {
                long tag = response.getEnvelope().getDeliveryTag();
                if (!settle(legacy, response.getProps(), response.getBody())) {
                    ch.basicNack(tag, false, true);
                    return n; // the next start tries again
                }
                ch.basicAck(tag, false);
                n++;
            }
            return n;
        });
        // Quorum queues refuse if-empty on delete: it is asked first. Unbound, the queue gets nothing new.
        boolean deleted = broker.withChannel(ch -> {
            if (ch.queueDeclarePassive(legacy).getMessageCount() > 0) {
                return false;
            }
            ch.queueDelete(legacy);
            return true;
        });
        legacyMoved = deleted;
        if (deleted) {
            LOG.infof("Moved %d dead letter(s) from %s into the database and deleted it", moved, legacy);
        } else {
            LOG.warnf("Moved %d dead letter(s) from %s; it is not empty yet, the next round goes on", moved, legacy);
        }
        return moved;
    }

    /**
     * Stores the message or returns it to work; true once that committed (and, for a return, the
     * broker confirmed the fresh copy), so the caller may ack it.
     */
    private boolean settle(String queue, AMQP.BasicProperties properties, byte[] body) {
        DeadLetterMessage message = DeadLetterMessage.read(mapper, queue, properties, body);
        for (int attempt = 1; ; attempt++) {
            try {
                if (store.receive(message) == DeadLetterStore.Decision.RETURN_TO_WORK) {
                    publisher.copyToWorkQueue(
                            DeadLetterMessage.freshCopy(properties, Map.of("x-returned-by", "dead-letter-mover")),
                            body);
                    LOG.infof(
                            "Attempt %s was dropped at the delivery limit with work left; sent back to the work queue",
                            message.attemptId());
                }
                return true;
            } catch (RuntimeException e) {
                if (attempt >= STORE_TRIES || stopping) {
                    LOG.warnf(
                            "Could not store dead letter %s (%d tries), handing it back: %s",
                            message.key(), attempt, e);
                    return false;
                }
                try {
                    Thread.sleep(500L << attempt);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
        }
    }

    private static boolean notFound(IOException e) {
        return e.getCause() instanceof ShutdownSignalException signal
                && signal.getReason() instanceof AMQP.Channel.Close close
                && close.getReplyCode() == 404;
    }

    private void closeQuietly() {
        Subscription current = subscription;
        subscription = null;
        if (current != null) {
            current.close();
        }
    }

    /**
     * A dead letter, stored then acknowledged on the connection's delivery thread, one after another.
     * A closed channel has returned it already; its row, if made, is found again by its key.
     */
    private void received(Channel channel, Envelope envelope, AMQP.BasicProperties properties, byte[] body)
            throws IOException {
        boolean settled = settle(AttemptTopology.DEAD_LETTER_QUEUE, properties, body);
        if (!channel.isOpen()) {
            return;
        }
        if (settled) {
            channel.basicAck(envelope.getDeliveryTag(), false);
        } else {
            channel.basicNack(envelope.getDeliveryTag(), false, true);
        }
    }
}
