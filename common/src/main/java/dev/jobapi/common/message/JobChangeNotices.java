package dev.jobapi.common.message;

import com.rabbitmq.client.AMQP;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.jboss.logging.Logger;

/**
 * Tells every api process which jobs' timelines changed, after the commit that changed them, on the
 * fan-out exchange {@link AttemptTopology#JOB_CHANGES_EXCHANGE}; each api process reads it from an
 * exclusive queue of its own and wakes the streams of those jobs (the api's JobChangeListener).
 *
 * <p>A notice carries no event: a woken stream reads the events from PostgreSQL. So a lost notice
 * costs a stream some latency (every stream rereads on its own every few seconds) and a repeated
 * one a read, and notices are sent the cheapest way: transient, unconfirmed, off the committing
 * thread, the job ids of every commit since the last send in one message, dropped when the broker
 * is away.
 */
@ApplicationScoped
public class JobChangeNotices {

    private static final Logger LOG = Logger.getLogger(JobChangeNotices.class);

    /** Job ids in one notice at most (about 37 bytes each). */
    static final int MAX_JOBS_PER_NOTICE = 1_000;

    private static final AMQP.BasicProperties TRANSIENT_TEXT = new AMQP.BasicProperties.Builder()
            .contentType("text/plain")
            .deliveryMode(1)
            .build();

    private final BrokerConnection broker;
    private final Set<UUID> unsent = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean sending = new AtomicBoolean();
    private final ExecutorService sender = Executors.newSingleThreadExecutor(work -> {
        Thread thread = new Thread(work, "job-change-notices");
        thread.setDaemon(true);
        return thread;
    });

    JobChangeNotices(BrokerConnection broker) {
        this.broker = broker;
    }

    /** The timelines of these jobs changed in a transaction that has committed (JobEvents). */
    public void changed(Set<UUID> jobIds) {
        unsent.addAll(jobIds);
        startSending();
    }

    private void startSending() {
        if (sending.compareAndSet(false, true)) {
            try {
                sender.execute(this::sendUnsent);
            } catch (RejectedExecutionException stopping) { // the process is stopping: nobody to tell
                sending.set(false);
            }
        }
    }

    void stop(@Observes ShutdownEvent event) {
        sender.shutdownNow();
    }

    /** The body of a notice: the job ids, one a line. */
    public static List<UUID> jobIdsOf(byte[] body) {
        return new String(body, StandardCharsets.US_ASCII)
                .lines()
                .filter(line -> !line.isBlank())
                .map(UUID::fromString)
                .toList();
    }

    private void sendUnsent() {
        try {
            while (!unsent.isEmpty()) {
                send(takeSome());
            }
        } finally {
            sending.set(false);
        }
        // A commit that added ids after the loop's last look and before the flag fell found it set.
        if (!unsent.isEmpty()) {
            startSending();
        }
    }

    private List<UUID> takeSome() {
        List<UUID> taken = new ArrayList<>();
        Iterator<UUID> ids = unsent.iterator();
        while (ids.hasNext() && taken.size() < MAX_JOBS_PER_NOTICE) {
            taken.add(ids.next());
            ids.remove();
        }
        return taken;
    }

    private void send(List<UUID> jobIds) {
        byte[] body = jobIds.stream()
                .map(UUID::toString)
                .collect(Collectors.joining("\n"))
                .getBytes(StandardCharsets.US_ASCII);
        try {
            broker.withPublishingChannel(channel -> {
                channel.basicPublish(AttemptTopology.JOB_CHANGES_EXCHANGE, "", TRANSIENT_TEXT, body);
                return null;
            });
        } catch (RuntimeException brokerAway) {
            LOG.debugf(
                    "Dropped a notice of %d changed jobs (streams reread on their own): %s", jobIds.size(), brokerAway);
        }
    }
}
