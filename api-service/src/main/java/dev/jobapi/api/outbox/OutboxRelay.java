package dev.jobapi.api.outbox;

import dev.jobapi.api.config.JobApiConfig;
import dev.jobapi.common.health.LoopHeartbeats;
import dev.jobapi.common.message.AttemptTopology;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.reactive.messaging.rabbitmq.OutgoingRabbitMQMetadata;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.persistence.EntityManager;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Emitter;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.jboss.logging.Logger;

/**
 * Moves committed outbox rows to RabbitMQ. Each round claims unsent rows with
 * {@code FOR UPDATE SKIP LOCKED} (so replicas share the work and a crashed replica's rows are simply
 * unlocked and taken by another), publishes them, waits for the broker's confirms and marks only
 * the confirmed rows sent. A crash between confirm and commit publishes a row twice, which the
 * worker treats like any redelivery.
 */
@ApplicationScoped
public class OutboxRelay {

    private static final Logger LOG = Logger.getLogger(OutboxRelay.class);

    /** The relay thread's name and its heartbeat's. */
    private static final String LOOP = "outbox-relay";

    private final Emitter<String> emitter;
    private final EntityManager em;
    private final JobApiConfig config;
    private final Clock clock;
    private final LoopHeartbeats heartbeats;
    private final Semaphore wakeups = new Semaphore(0);
    private volatile boolean running;
    private Thread thread;

    OutboxRelay(
            @Channel("attempts-out") Emitter<String> emitter,
            EntityManager em,
            JobApiConfig config,
            Clock clock,
            LoopHeartbeats heartbeats) {
        this.emitter = emitter;
        this.heartbeats = heartbeats;
        this.em = em;
        this.config = config;
        this.clock = clock;
    }

    void start(@Observes StartupEvent event) {
        running = true;
        // A round waits for confirms; a dozen poll intervals plus that wait is far past a healthy one.
        heartbeats.expect(
                LOOP,
                config.outbox()
                        .pollInterval()
                        .multipliedBy(12)
                        .plus(config.outbox().confirmTimeout()));
        thread = new Thread(this::loop, LOOP);
        thread.setDaemon(true);
        thread.start();
    }

    void stop(@Observes ShutdownEvent event) throws InterruptedException {
        running = false;
        wake();
        if (thread != null) {
            thread.join(5_000);
        }
    }

    /** Called after a commit that wrote outbox rows, so they leave now rather than at the next poll. */
    public void wake() {
        if (wakeups.availablePermits() == 0) {
            wakeups.release();
        }
    }

    /**
     * Relays until shutdown. Whatever a round throws (a database or broker away, an {@link Error}
     * such as an OutOfMemoryError caused elsewhere in the process) is logged and the loop goes on
     * after one poll interval, keeping the rows. Every round beats the relay's heartbeat, so a thread
     * that died or hangs shows in the health checks.
     */
    private void loop() {
        while (running) {
            try {
                while (running && relayOneBatch() == config.outbox().batchSize()) {
                    // A full batch suggests more rows are waiting: go again without sleeping.
                }
                wakeups.tryAcquire(config.outbox().pollInterval().toMillis(), TimeUnit.MILLISECONDS);
                wakeups.drainPermits();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Throwable e) { // see above: the relay must outlive an Error too
                LOG.errorf(e, "Outbox relay round failed");
                sleepQuietly();
            } finally {
                heartbeats.beat(LOOP);
            }
        }
    }

    /** Publishes one batch and returns how many rows it claimed. */
    int relayOneBatch() {
        return QuarkusTransaction.requiringNew().call(() -> {
            @SuppressWarnings("unchecked")
            List<Object[]> rows = em.createNativeQuery("SELECT id, attempt_id, job_id FROM outbox WHERE sent_at IS NULL"
                            + " ORDER BY id LIMIT ?1 FOR UPDATE SKIP LOCKED")
                    .setParameter(1, config.outbox().batchSize())
                    .getResultList();
            if (rows.isEmpty()) {
                return 0;
            }
            List<Long> ids = new ArrayList<>();
            List<CompletableFuture<Void>> confirms = new ArrayList<>();
            for (Object[] row : rows) {
                ids.add(((Number) row[0]).longValue());
                confirms.add(publish((UUID) row[1], (UUID) row[2]));
            }
            List<Long> confirmed = new ArrayList<>();
            for (int i = 0; i < ids.size(); i++) {
                try {
                    confirms.get(i).get(config.outbox().confirmTimeout().toMillis(), TimeUnit.MILLISECONDS);
                    confirmed.add(ids.get(i));
                } catch (Exception e) {
                    recordFailure(ids.get(i), e);
                }
            }
            if (!confirmed.isEmpty()) {
                em.createNativeQuery("UPDATE outbox SET sent_at = ?1, publish_attempts = publish_attempts + 1"
                                + " WHERE id = ANY(?2)")
                        .setParameter(1, clock.instant())
                        .setParameter(2, confirmed.toArray(Long[]::new))
                        .executeUpdate();
            }
            return rows.size();
        });
    }

    private CompletableFuture<Void> publish(UUID attemptId, UUID jobId) {
        CompletableFuture<Void> confirmed = new CompletableFuture<>();
        String body = "{\"attemptId\":\"" + attemptId + "\",\"jobId\":\"" + jobId + "\"}";
        OutgoingRabbitMQMetadata metadata = OutgoingRabbitMQMetadata.builder()
                .withRoutingKey(AttemptTopology.ROUTING_KEY)
                .withContentType("application/json")
                .withDeliveryMode(2)
                .withMessageId(attemptId.toString())
                .withCorrelationId(jobId.toString())
                .build();
        emitter.send(Message.of(body, Metadata.of(metadata))
                .withAck(() -> {
                    confirmed.complete(null);
                    return CompletableFuture.completedFuture(null);
                })
                .withNack(failure -> {
                    confirmed.completeExceptionally(failure);
                    return CompletableFuture.completedFuture(null);
                }));
        return confirmed;
    }

    private void recordFailure(long outboxId, Exception failure) {
        LOG.warnf("Outbox row %d not confirmed by the broker, will retry: %s", outboxId, failure.toString());
        em.createNativeQuery("UPDATE outbox SET publish_attempts = publish_attempts + 1, last_error = ?1 WHERE id = ?2")
                .setParameter(1, failure.toString())
                .setParameter(2, outboxId)
                .executeUpdate();
    }

    private void sleepQuietly() {
        try {
            Thread.sleep(config.outbox().pollInterval().toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
