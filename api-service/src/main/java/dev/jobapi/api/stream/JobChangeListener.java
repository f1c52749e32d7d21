package dev.jobapi.api.stream;

import com.rabbitmq.client.BuiltinExchangeType;
import dev.jobapi.common.health.BackgroundLoops;
import dev.jobapi.common.message.AttemptTopology;
import dev.jobapi.common.message.BrokerConnection;
import dev.jobapi.common.message.JobChangeNotices;
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
import org.jboss.logging.Logger;

/**
 * This process's queue of job change notices: an exclusive, server-named queue bound to the
 * fan-out exchange, on a connection of its own, so it lives exactly as long as the subscription
 * (a node lost with it takes both; the loop makes both again, and RabbitMQ 4.x, which deprecates
 * transient queues that are not exclusive, accepts it). Each notice wakes the streams of its jobs.
 * Acknowledged as it arrives: a notice is only a wake-up call.
 */
@ApplicationScoped
public class JobChangeListener {

    private static final Logger LOG = Logger.getLogger(JobChangeListener.class);

    /** The subscription loop's scheduler identity and heartbeat name. */
    private static final String LOOP = "job-change-listener";

    private static final int PREFETCH = 100;

    private final BrokerConnection broker;
    private final JobStreams streams;
    private final BackgroundLoops loops;
    private volatile Subscription subscription;
    private volatile boolean stopping;

    JobChangeListener(BrokerConnection broker, JobStreams streams, BackgroundLoops loops) {
        this.broker = broker;
        this.streams = streams;
        this.loops = loops;
    }

    void start(@Observes StartupEvent event) {
        loops.expect(LOOP, Duration.ofSeconds(2), Duration.ofSeconds(30));
    }

    /** The subscription loop: every 2 s, a lost subscription is made again. */
    @Scheduled(
            identity = LOOP,
            every = "2s",
            delayed = "1s",
            concurrentExecution = ConcurrentExecution.SKIP,
            skipExecutionIf = BackgroundLoops.class)
    void scheduledSubscription() {
        loops.round(LOOP, this::subscribeIfNeeded);
    }

    void stop(@Observes @Priority(1) ShutdownEvent event) {
        stopping = true;
        synchronized (this) {
            if (subscription != null) {
                subscription.close();
            }
        }
    }

    /** Subscribes when not subscribed; then wakes every stream, for the notices missed meanwhile. */
    public synchronized void subscribeIfNeeded() {
        if (stopping || subscribed()) {
            return;
        }
        if (subscription != null) {
            subscription.close();
        }
        try {
            subscription = Subscription.open(
                    broker,
                    "jobapi-job-change-listener",
                    channel -> {
                        channel.exchangeDeclare(AttemptTopology.JOB_CHANGES_EXCHANGE, BuiltinExchangeType.FANOUT, true);
                        String queue = channel.queueDeclare().getQueue();
                        channel.queueBind(queue, AttemptTopology.JOB_CHANGES_EXCHANGE, "");
                        return queue;
                    },
                    PREFETCH,
                    (channel, envelope, properties, body) -> {
                        channel.basicAck(envelope.getDeliveryTag(), false);
                        streams.wake(JobChangeNotices.jobIdsOf(body));
                    });
            streams.wakeAll();
        } catch (IOException | RuntimeException e) {
            LOG.warnf("Could not subscribe to %s, retrying: %s", AttemptTopology.JOB_CHANGES_EXCHANGE, e.toString());
        }
    }

    /** Whether notices reach this process now. */
    public boolean subscribed() {
        Subscription current = subscription;
        return current != null && current.live();
    }
}
