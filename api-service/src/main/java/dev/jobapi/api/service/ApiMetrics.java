package dev.jobapi.api.service;

import dev.jobapi.common.message.DeadLetterQueue;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.persistence.EntityManager;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jboss.logging.Logger;

/**
 * The api's Prometheus metrics, named so an operator can guess them: {@code jobapi_jobs_created_total},
 * {@code jobapi_jobs_replayed_total}, {@code jobapi_idempotency_key_conflicts_total},
 * {@code jobapi_review_required_refusals_total}, {@code jobapi_dlq_replayed_total}, and the gauges
 * {@code jobapi_unknown_attempts_open}, {@code jobapi_dlq_depth}, {@code jobapi_outbox_lag_seconds}.
 * The gauges are refreshed on a background thread, never on a scrape (which runs on the event loop).
 */
@ApplicationScoped
public class ApiMetrics {

    private static final Logger LOG = Logger.getLogger(ApiMetrics.class);

    private final MeterRegistry registry;
    private final EntityManager em;
    private final DeadLetterQueue deadLetters;
    private final AtomicLong unknownAttemptsOpen = new AtomicLong();
    private final AtomicLong dlqDepth = new AtomicLong();
    private final AtomicLong outboxLagSeconds = new AtomicLong();
    private ScheduledExecutorService refresher;

    ApiMetrics(MeterRegistry registry, EntityManager em, DeadLetterQueue deadLetters) {
        this.registry = registry;
        this.em = em;
        this.deadLetters = deadLetters;
        registry.gauge("jobapi.unknown.attempts.open", unknownAttemptsOpen);
        registry.gauge("jobapi.dlq.depth", dlqDepth);
        registry.gauge("jobapi.outbox.lag.seconds", outboxLagSeconds);
    }

    void start(@Observes StartupEvent event) {
        refresher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "metrics-refresher");
            t.setDaemon(true);
            return t;
        });
        refresher.scheduleWithFixedDelay(this::refresh, 0, 5, TimeUnit.SECONDS);
    }

    void stop(@Observes ShutdownEvent event) {
        if (refresher != null) {
            refresher.shutdownNow();
        }
    }

    /** Reads the gauges' values now; also called by tests that want fresh values. */
    public void refresh() {
        try {
            // One short transaction per gauge: holding one table's lock while asking for the next is
            // how background readers deadlock with schema changes and bulk deletes.
            unknownAttemptsOpen.set(scalar("SELECT count(*) FROM attempt WHERE state = 'unknown'"));
            outboxLagSeconds.set(scalar("SELECT coalesce(extract(epoch FROM now() - min(created_at)), 0)"
                    + " FROM outbox WHERE sent_at IS NULL"));
            dlqDepth.set(deadLetters.depth());
        } catch (RuntimeException e) {
            LOG.debugf("Metrics refresh failed: %s", e);
        }
    }

    private long scalar(String sql) {
        return QuarkusTransaction.requiringNew()
                .call(() -> ((Number) em.createNativeQuery(sql).getSingleResult()).longValue());
    }

    public void jobCreated() {
        registry.counter("jobapi.jobs.created").increment();
    }

    public void jobReplayed() {
        registry.counter("jobapi.jobs.replayed").increment();
    }

    public void keyConflict() {
        registry.counter("jobapi.idempotency.key.conflicts").increment();
    }

    public void reviewRequiredRefusal() {
        registry.counter("jobapi.review.required.refusals").increment();
    }

    public void replayed(int messages) {
        registry.counter("jobapi.dlq.replayed").increment(messages);
    }
}
