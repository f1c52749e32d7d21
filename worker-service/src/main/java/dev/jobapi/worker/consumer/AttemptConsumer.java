package dev.jobapi.worker.consumer;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Envelope;
import dev.jobapi.common.database.DatabaseAway;
import dev.jobapi.common.database.WriteConflict;
import dev.jobapi.common.health.BackgroundLoops;
import dev.jobapi.common.message.AttemptMessage;
import dev.jobapi.common.message.AttemptTopology;
import dev.jobapi.common.message.BrokerConnection;
import dev.jobapi.common.message.ConfirmedPublisher;
import dev.jobapi.common.message.Subscription;
import dev.jobapi.common.tracing.RequestIds;
import dev.jobapi.common.tracing.TraceAttributes;
import dev.jobapi.common.tracing.Tracing;
import dev.jobapi.worker.config.WorkerConfig;
import dev.jobapi.worker.repository.AttemptWork;
import dev.jobapi.worker.service.AttemptPipeline;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Scope;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.Scheduled.ConcurrentExecution;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.jboss.logging.Logger;
import org.jboss.logging.MDC;

/**
 * Consumes {@code jobs.attempts} with manual acknowledgement on a connection of its own, with the
 * plain AMQP client because a deploy and a reconnect need what the messaging connector does not do:
 * it cancels its consumer only after every shutdown observer ran, drains nothing and drops the
 * messages it prefetched, and after a reconnect it acks by delivery tag on its current channel, where
 * an old tag can ack a different message. Here the consumer is cancelled first and what it holds is
 * handed back.
 *
 * <ul>
 *   <li>Ack only after the pipeline's transactions committed (docs/design.md, rule 8); several
 *       committed deliveries share one ack when no delivery still at work is below them ({@link
 *       Acknowledgements}), and those waiting are sent before the channel closes.
 *   <li>A delivery that fails is counted on its attempt in the database and parked in the delay
 *       queue (a new message: the broker's count is not spent); at {@link
 *       AttemptTopology#DELIVERY_LIMIT} counted failures it is rejected to the dead-letter queue
 *       (rule 13). A message that is not an attempt message at all goes there at once. Returns
 *       caused by a restart or a lost connection are never counted here.
 *   <li>Shutdown (a rolling deploy's SIGTERM) cancels the consumer first, hands the messages it
 *       holds but has not started back to the queue as fresh copies (published, confirmed, then the
 *       original acked: no delivery counted), and gives the attempts in flight a bounded time to
 *       finish.
 *   <li>A consumer the broker cancelled (its queue deleted) or a closed connection is noticed by a
 *       loop that declares the topology again and subscribes again.
 *   <li>A delivery is a consumer span whose parent is the trace context in the message's headers
 *       ({@code traceparent}, put there by the publish): the pipeline's spans and the ack join the
 *       trace of the request that made the attempt.
 * </ul>
 */
@ApplicationScoped
public class AttemptConsumer {

    private static final Logger LOG = Logger.getLogger(AttemptConsumer.class);

    /** The subscription loop's scheduler identity and heartbeat name. */
    private static final String LOOP = "attempt-consumer";

    /** The span of one delivery (OpenTelemetry's messaging convention: operation, destination). */
    static final String PROCESS_SPAN = "process " + AttemptTopology.QUEUE;

    static final String ACK_SPAN = "message.ack";

    private final AttemptPipeline pipeline;
    private final AttemptWork work;
    private final DelayQueue delayQueue;
    private final ConfirmedPublisher publisher;
    private final BrokerConnection broker;
    private final BackgroundLoops loops;
    private final ObjectMapper mapper;
    private final WorkerConfig.Worker config;
    private final Tracing tracing;
    private final AtomicInteger inFlight = new AtomicInteger();

    private ThreadPoolExecutor workers;
    private volatile Subscription subscription;
    /** The acknowledgements of {@link #subscription}'s channel. */
    private volatile Acknowledgements acknowledgements;

    private volatile boolean draining;

    AttemptConsumer(
            AttemptPipeline pipeline,
            AttemptWork work,
            DelayQueue delayQueue,
            ConfirmedPublisher publisher,
            BrokerConnection broker,
            BackgroundLoops loops,
            ObjectMapper mapper,
            WorkerConfig config,
            Tracing tracing) {
        this.tracing = tracing;
        this.pipeline = pipeline;
        this.work = work;
        this.delayQueue = delayQueue;
        this.publisher = publisher;
        this.broker = broker;
        this.loops = loops;
        this.mapper = mapper;
        this.config = config.worker();
    }

    void start(@Observes StartupEvent event) {
        loops.expect(LOOP, Duration.ofSeconds(2), Duration.ofSeconds(30));
        subscribeIfNeeded();
    }

    /** The subscription loop: every 2 s, a lost subscription is made again (never while draining). */
    @Scheduled(
            identity = LOOP,
            every = "2s",
            delayed = "2s",
            concurrentExecution = ConcurrentExecution.SKIP,
            skipExecutionIf = BackgroundLoops.class)
    void scheduledSubscription() {
        loops.round(LOOP, this::subscribeIfNeeded);
    }

    /**
     * Subscribes when not subscribed (first start, lost connection, consumer cancelled by the
     * broker), and again when the subscription has gone quiet: RabbitMQ 3.10 can leave a consumer
     * attached to a quorum queue that was deleted and declared again in the same instant, so the
     * channel looks subscribed and receives nothing, holding whatever it had been sent. The queue
     * then counts those messages as unacknowledged, not ready, and no count this process can read
     * tells such a subscription from an idle one, so every quiet one is made again. Closing it hands
     * those messages back; the claim makes a second delivery harmless.
     */
    public synchronized void subscribeIfNeeded() {
        if (draining) {
            return;
        }
        Subscription current = subscription;
        if (current != null && current.live()) {
            if (!quiet(current)) {
                return;
            }
            LOG.debugf(
                    "Received nothing for %d s with nothing in hand; subscribing to %s again",
                    config.stallAfter().toSeconds(), AttemptTopology.QUEUE);
        }
        closeQuietly();
        if (workers == null || workers.isShutdown()) {
            workers = newWorkerPool(config.concurrency());
        }
        try {
            broker.declareTopology();
            // Made for the channel before it consumes: no delivery arrives without them.
            AtomicReference<Acknowledgements> ofTheChannel = new AtomicReference<>();
            subscription = Subscription.open(
                    broker,
                    "jobapi-attempt-consumer",
                    channel -> {
                        ofTheChannel.set(new Acknowledgements(channel));
                        return AttemptTopology.QUEUE;
                    },
                    config.prefetch(),
                    (channel, envelope, properties, body) -> received(ofTheChannel.get(), envelope, properties, body));
            acknowledgements = ofTheChannel.get();
            LOG.infof(
                    "Consuming %s (prefetch %d, %d at once)",
                    AttemptTopology.QUEUE, config.prefetch(), config.concurrency());
        } catch (IOException | RuntimeException e) {
            LOG.warnf("Could not subscribe to %s, retrying: %s", AttemptTopology.QUEUE, e.toString());
        }
    }

    /** A delivery from the broker, handed to the worker pool (or straight back while draining). */
    private void received(
            Acknowledgements acknowledgements, Envelope envelope, AMQP.BasicProperties properties, byte[] body) {
        acknowledgements.received(envelope.getDeliveryTag());
        Delivery delivery = new Delivery(acknowledgements, envelope, properties, body);
        if (draining) {
            delivery.handBack(); // arrived between the cancel and its confirmation
        } else {
            workers.execute(delivery);
        }
    }

    /** Whether the subscription has received nothing for {@code jobapi.worker.stall-after} with nothing in hand. */
    private boolean quiet(Subscription current) {
        return current.quietFor(config.stallAfter())
                && inFlight.get() == 0
                && workers.getQueue().isEmpty();
    }

    /** Whether the broker is delivering to this worker now. */
    public boolean subscribed() {
        Subscription current = subscription;
        return current != null && current.live();
    }

    /**
     * Stops taking work, hands back what was received but not started, and waits a bounded time for
     * the attempts in flight. Runs before the rest of the application shuts down.
     */
    void drain(@Observes @Priority(1) ShutdownEvent event) throws InterruptedException {
        stopConsuming();
    }

    /** The shutdown sequence; also what a test calls to see a deploy's drain. */
    public void stopConsuming() throws InterruptedException {
        List<Runnable> notStarted = new ArrayList<>();
        synchronized (this) {
            draining = true;
            cancelConsumer();
            if (workers != null) {
                workers.getQueue().drainTo(notStarted);
                workers.shutdown();
            }
        }
        for (Runnable task : notStarted) {
            ((Delivery) task).handBack();
        }
        if (workers != null && !workers.awaitTermination(config.shutdownGrace().toMillis(), TimeUnit.MILLISECONDS)) {
            LOG.warnf("Abandoning %d attempt message(s) unacked; they will be redelivered", inFlight.get());
        }
        synchronized (this) {
            closeQuietly();
        }
    }

    /** Takes work again after {@link #stopConsuming()}: a restarted process, or a test. */
    public synchronized void resume() {
        draining = false;
        subscribeIfNeeded();
    }

    private void cancelConsumer() {
        Subscription current = subscription;
        if (current != null) {
            current.cancel();
        }
    }

    /** Sends the acks still waiting, then closes: what the broker returns is only work not committed. */
    private void closeQuietly() {
        Subscription current = subscription;
        Acknowledgements pending = acknowledgements;
        subscription = null;
        acknowledgements = null;
        if (current != null) {
            pending.flush();
            current.close();
        }
    }

    private static ThreadPoolExecutor newWorkerPool(int concurrency) {
        AtomicInteger n = new AtomicInteger();
        return new ThreadPoolExecutor(
                concurrency, concurrency, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "attempt-worker-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
    }

    /** One received message, worked on a pool thread (or handed back at shutdown). */
    private final class Delivery implements Runnable {
        private final Acknowledgements acknowledgements;
        private final Envelope envelope;
        private final AMQP.BasicProperties properties;
        private final String body;

        Delivery(Acknowledgements acknowledgements, Envelope envelope, AMQP.BasicProperties properties, byte[] body) {
            this.acknowledgements = acknowledgements;
            this.envelope = envelope;
            this.properties = properties;
            this.body = new String(body, StandardCharsets.UTF_8);
        }

        @Override
        public void run() {
            inFlight.incrementAndGet();
            Span span = tracing.start(
                            PROCESS_SPAN, SpanKind.CONSUMER, tracing.fromHeaders(properties.getHeaders()), null, null)
                    .setAttribute(TraceAttributes.MESSAGING_SYSTEM, "rabbitmq")
                    .setAttribute(TraceAttributes.MESSAGING_DESTINATION, AttemptTopology.QUEUE)
                    .setAttribute(TraceAttributes.MESSAGING_OPERATION, "process");
            // The request that made the work (its outbox row's id, in the message): every line of this
            // work, and any message it publishes (a parked copy, a fallback), carries that id.
            Map<String, Object> headers = properties.getHeaders();
            RequestIds.wellFormed(headers == null ? null : headers.get(RequestIds.MESSAGE_HEADER))
                    .ifPresent(RequestIds::enter);
            try (Scope ignored = Tracing.makeCurrent(span)) {
                work(span);
            } finally {
                RequestIds.leave();
                span.end();
                inFlight.decrementAndGet();
            }
        }

        private void work(Span span) {
            AttemptMessage message;
            try {
                message = mapper.readValue(body, AttemptMessage.class);
                if (message.attemptId() == null) {
                    throw new IllegalArgumentException("names no attemptId");
                }
            } catch (IOException | RuntimeException unreadable) {
                // Not an attempt message: no delivery will ever make sense of it.
                LOG.errorf("Dead-lettering a message that is not an attempt message (%s): %.200s", unreadable, body);
                Tracing.failed(span, unreadable);
                deadLetter();
                return;
            }
            Tracing.name(span, message.jobId(), message.attemptId());
            MDC.put("attemptId", String.valueOf(message.attemptId()));
            MDC.put("jobId", String.valueOf(message.jobId()));
            try {
                if (pipeline.process(message, envelope.isRedeliver()) == AttemptPipeline.Disposition.PARK) {
                    delayQueue.park(body); // in this span: the parked copy carries the trace on
                }
                tracing.runInSpan(
                        ACK_SPAN,
                        message.jobId(),
                        message.attemptId(),
                        () -> acknowledgements.ack(envelope.getDeliveryTag()));
            } catch (Throwable failure) { // an Error too: the message must not be lost with the thread's task
                Tracing.failed(span, failure);
                failed(message, failure);
            } finally {
                MDC.remove("attemptId");
                MDC.remove("jobId");
            }
        }

        /**
         * Counts the failure on the attempt; under the limit the message waits in the delay queue
         * and comes back, at the limit it is dead-lettered. A transient failure (the database away,
         * a write lost to a concurrent one) says nothing about the message: it is parked, never
         * counted, so a failover however long dead-letters no healthy attempt. So is a failure that
         * cannot even be counted.
         */
        private void failed(AttemptMessage message, Throwable failure) {
            int failures = 0;
            if (!DatabaseAway.isCause(failure) && !WriteConflict.isCause(failure)) {
                try {
                    failures =
                            QuarkusTransaction.requiringNew().call(() -> work.countFailedDelivery(message.attemptId()));
                } catch (RuntimeException databaseAway) {
                    failures = 0;
                }
            }
            if (failures >= AttemptTopology.DELIVERY_LIMIT) {
                LOG.errorf(failure, "Delivery failed %d times; dead-lettering the message", failures);
                try {
                    pipeline.deadLettered(message.attemptId(), failures, failure);
                } catch (RuntimeException notSettled) {
                    // The sweep still finds the attempt: its lease runs out, or it is announced again.
                    LOG.warnf(
                            "Could not settle attempt %s before dead-lettering it: %s",
                            message.attemptId(), notSettled);
                }
                deadLetter();
                return;
            }
            LOG.warnf("Attempt message not processed (failure %d), retrying after a delay: %s", failures, failure);
            try {
                delayQueue.park(body);
                settle((channel, tag) -> channel.basicAck(tag, false));
            } catch (RuntimeException brokerAway) {
                settle((channel, tag) -> channel.basicNack(tag, false, true));
            }
        }

        /**
         * Rejects the message to the dead-letter queue. The topology is declared first: a rejected
         * message whose dead-letter exchange was deleted would be dropped without a trace.
         */
        private void deadLetter() {
            try {
                broker.declareTopology();
            } catch (RuntimeException brokerAway) {
                LOG.debugf("Declaring the topology before a dead-letter failed: %s", brokerAway);
            }
            settle((channel, tag) -> channel.basicReject(tag, false));
        }

        /** Back to the queue as a fresh copy, then the original acked: no delivery counted. */
        void handBack() {
            try {
                publisher.toWorkQueue(body);
                settle((channel, tag) -> channel.basicAck(tag, false));
            } catch (RuntimeException e) {
                LOG.warnf("Could not hand a message back (%s); the broker returns it when the connection closes", e);
            }
        }

        /** Settles this delivery on its own, never with others. */
        private void settle(Acknowledgements.Settlement settlement) {
            acknowledgements.settle(envelope.getDeliveryTag(), settlement);
        }
    }
}
