package dev.jobapi.api.service;

import dev.jobapi.common.message.DeadLetterQueue;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
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
 * Every meter is registered at start-up, counters at zero, each with its help text, so an alert on a
 * rare event (a review-required refusal) has a series before the first one; README's metric table
 * lists the same names and help texts ({@code MetricsTest} compares them).
 */
@ApplicationScoped
public class ApiMetrics {

    private static final Logger LOG = Logger.getLogger(ApiMetrics.class);

    private final EntityManager em;
    private final DeadLetterQueue deadLetters;
    private final AtomicLong unknownAttemptsOpen = new AtomicLong();
    private final AtomicLong dlqDepth = new AtomicLong();
    private final AtomicLong outboxLagSeconds = new AtomicLong();
    private final Counter jobsCreated;
    private final Counter jobsReplayed;
    private final Counter keyConflicts;
    private final Counter reviewRequiredRefusals;
    private final Counter dlqReplayed;
    private ScheduledExecutorService refresher;

    ApiMetrics(MeterRegistry registry, EntityManager em, DeadLetterQueue deadLetters) {
        this.em = em;
        this.deadLetters = deadLetters;
        jobsCreated = counter(registry, "jobapi.jobs.created", "Jobs created by POST /jobs (not replays)");
        jobsReplayed = counter(
                registry, "jobapi.jobs.replayed", "POST /jobs answered with the job its Idempotency-Key already made");
        keyConflicts = counter(
                registry,
                "jobapi.idempotency.key.conflicts",
                "Idempotency-Keys reused with a different request (422 idempotency-key-reused)");
        reviewRequiredRefusals = counter(
                registry,
                "jobapi.review.required.refusals",
                "Attempt requests refused because an earlier attempt may still produce a result (409 review-required)");
        dlqReplayed = counter(registry, "jobapi.dlq.replayed", "Dead-lettered attempt messages replayed by operators");
        gauge(
                registry,
                "jobapi.unknown.attempts.open",
                "Attempts in state unknown, awaiting a reviewer",
                unknownAttemptsOpen);
        gauge(registry, "jobapi.dlq.depth", "Messages in the dead-letter queue", dlqDepth);
        gauge(
                registry,
                "jobapi.outbox.lag.seconds",
                "Age of the oldest outbox row not yet published to RabbitMQ",
                outboxLagSeconds);
    }

    private static Counter counter(MeterRegistry registry, String name, String help) {
        return Counter.builder(name).description(help).register(registry);
    }

    private static void gauge(MeterRegistry registry, String name, String help, AtomicLong value) {
        Gauge.builder(name, value, AtomicLong::doubleValue).description(help).register(registry);
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
        jobsCreated.increment();
    }

    public void jobReplayed() {
        jobsReplayed.increment();
    }

    public void keyConflict() {
        keyConflicts.increment();
    }

    public void reviewRequiredRefusal() {
        reviewRequiredRefusals.increment();
    }

    public void replayed(int messages) {
        dlqReplayed.increment(messages);
    }
}
