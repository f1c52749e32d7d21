package dev.jobapi.api.service;

import dev.jobapi.api.config.JobApiConfig;
import dev.jobapi.common.attempt.AttemptState;
import dev.jobapi.common.budget.DailyBudgets;
import dev.jobapi.common.health.BackgroundLoops;
import dev.jobapi.common.message.AttemptTopology;
import dev.jobapi.common.message.BrokerConnection;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.Scheduled.ConcurrentExecution;
import jakarta.inject.Singleton;
import jakarta.persistence.EntityManager;
import jakarta.persistence.Query;
import java.util.EnumSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jboss.logging.Logger;

/**
 * The api's Prometheus metrics, named so an operator can guess them: {@code jobapi_jobs_created_total},
 * {@code jobapi_jobs_replayed_total}, {@code jobapi_idempotency_key_conflicts_total},
 * {@code jobapi_review_required_refusals_total}, {@code jobapi_dlq_replayed_total}, and the gauges
 * of what waits (unknown and quarantined attempts, the work and dead-letter queues, the outbox) and
 * of the budgets; the README's metric table lists them all.
 * The gauges are refreshed by a scheduled job every 5 s, never on a scrape (which runs on the event loop).
 * Every meter is registered at start-up, counters at zero, each with its help text, so an alert on a
 * rare event (a review-required refusal) has a series before the first one; README's metric table
 * lists the same names and help texts ({@code MetricsTest} compares them).
 */
// Made at start-up, not at the first job: the meters must exist before anything counts.
@Startup
@Singleton
public class ApiMetrics {

    /** Unknown attempts and the quarantined ones, which are unknown ones held for an operator. */
    private static final String[] AWAITING_OPERATOR =
            AttemptState.wireNames(EnumSet.of(AttemptState.UNKNOWN, AttemptState.QUARANTINED)::contains);

    private static final Logger LOG = Logger.getLogger(ApiMetrics.class);

    private final EntityManager em;
    private final DeadLetterQueue deadLetters;
    private final BrokerConnection broker;
    private final DailyBudgets budgets;
    private final AtomicLong unknownAttemptsOpen = new AtomicLong();
    private final AtomicLong dlqDepth = new AtomicLong();
    private final AtomicLong outboxLagSeconds = new AtomicLong();
    private final int queueAhead;
    private final AtomicLong quarantinedAttemptsOpen = new AtomicLong();
    private final AtomicLong oldestUnknownAgeSeconds = new AtomicLong();
    private final AtomicLong providersGateShut = new AtomicLong();
    private final AtomicLong workQueueDepth = new AtomicLong();
    private final AtomicReference<Double> highestBudgetShareSpent = new AtomicReference<>(0.0);
    private final Counter jobsCreated;
    private final Counter jobsReplayed;
    private final Counter keyConflicts;
    private final Counter reviewRequiredRefusals;
    private final Counter dlqReplayed;
    private final Counter loadShed;

    ApiMetrics(
            MeterRegistry registry,
            EntityManager em,
            DeadLetterQueue deadLetters,
            BrokerConnection broker,
            DailyBudgets budgets,
            JobApiConfig config) {
        this.em = em;
        this.queueAhead = config.outbox().queueAhead();
        this.deadLetters = deadLetters;
        this.broker = broker;
        this.budgets = budgets;
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
        loadShed = counter(
                registry,
                "jobapi.requests.shed",
                "Requests answered 503 server-busy: no database connection in time, or no turn for a page of jobs");
        gauge(
                registry,
                "jobapi.unknown.attempts.open",
                "Attempts in state unknown, awaiting a reviewer",
                unknownAttemptsOpen);
        gauge(registry, "jobapi.dlq.depth", "Dead letters stored and not yet replayed or discarded", dlqDepth);
        gauge(
                registry,
                "jobapi.outbox.lag.seconds",
                "Age of the oldest outbox row not yet published to RabbitMQ while the work queue has room for it",
                outboxLagSeconds);
        gauge(
                registry,
                "jobapi.quarantined.attempts.open",
                "Attempts held in quarantine (provider reported no usage), awaiting an operator",
                quarantinedAttemptsOpen);
        gauge(
                registry,
                "jobapi.unknown.attempts.oldest.age.seconds",
                "Seconds since the longest-waiting unknown attempt last changed, 0 when none",
                oldestUnknownAgeSeconds);
        gauge(registry, "jobapi.work.queue.depth", "Attempt messages ready in the work queue", workQueueDepth);
        gauge(
                registry,
                "jobapi.providers.gate.shut",
                "Providers whose calls their health gate holds now: breaker open or half open, or an announced rate"
                        + " limit (docs/design.md, rule 21)",
                providersGateShut);
        Gauge.builder("jobapi.budget.spent.ratio.max", highestBudgetShareSpent, AtomicReference::get)
                .description("The largest share of its daily token budget any owner has spent today (1 = spent)")
                .register(registry);
    }

    private static Counter counter(MeterRegistry registry, String name, String help) {
        return Counter.builder(name).description(help).register(registry);
    }

    private static void gauge(MeterRegistry registry, String name, String help, AtomicLong value) {
        Gauge.builder(name, value, AtomicLong::doubleValue).description(help).register(registry);
    }

    /**
     * Every 5 s from start; no heartbeat, as before: a refresh is a few short reads that fail fast, and
     * stale gauges are no reason to restart the pod.
     */
    @Scheduled(
            identity = "metrics-refresher",
            every = "5s",
            concurrentExecution = ConcurrentExecution.SKIP,
            skipExecutionIf = BackgroundLoops.class)
    void scheduledRefresh() {
        refresh();
    }

    /** Reads the gauges' values now; also called by tests that want fresh values. */
    public void refresh() {
        try {
            // One short transaction per gauge: holding one table's lock while asking for the next is
            // how background readers deadlock with schema changes and bulk deletes.
            // Quarantined attempts are unknown ones held for an operator, as the API shows them: counted here too.
            unknownAttemptsOpen.set(scalar("SELECT count(*) FROM attempt WHERE state = ANY(?1)", AWAITING_OPERATOR));
            long ready = readyInTheWorkQueue();
            // With the work queue at its share (jobapi.outbox.queue-ahead), unsent rows wait their
            // owner's turn: a backlog the queue depth shows, not a relay that stopped. With the broker
            // away (depth unknown) the lag counts, as the publishes fail.
            outboxLagSeconds.set(
                    ready >= queueAhead
                            ? 0
                            : scalar("SELECT coalesce(extract(epoch FROM now() - min(created_at)), 0)"
                                    + " FROM outbox WHERE sent_at IS NULL"));
            dlqDepth.set(deadLetters.depth());
            quarantinedAttemptsOpen.set(scalar("SELECT count(*) FROM attempt WHERE state = 'quarantined'"));
            oldestUnknownAgeSeconds.set(scalar(
                    "SELECT coalesce(extract(epoch FROM now() - min(updated_at)), 0)"
                            + " FROM attempt WHERE state = ANY(?1)",
                    AWAITING_OPERATOR));
            providersGateShut.set(scalar("SELECT count(*) FROM provider_health"
                    + " WHERE state <> 'closed' OR limited_until > statement_timestamp()"));
            highestBudgetShareSpent.set(QuarkusTransaction.requiringNew().call(budgets::highestShareSpentToday));
        } catch (RuntimeException e) {
            LOG.debugf("Metrics refresh failed: %s", e);
        }
    }

    /** The work queue's ready messages, also kept as its gauge; -1 when the broker does not say. */
    private long readyInTheWorkQueue() {
        try {
            long ready = broker.withChannel(channel ->
                    (long) channel.queueDeclarePassive(AttemptTopology.QUEUE).getMessageCount());
            workQueueDepth.set(ready);
            return ready;
        } catch (RuntimeException unknown) {
            LOG.debugf("Work queue depth unread: %s", unknown);
            return -1;
        }
    }

    /** Reads one number; {@code states}, when given, is the statement's one parameter, a state set. */
    private long scalar(String sql, String... states) {
        return QuarkusTransaction.requiringNew().call(() -> {
            Query query = em.createNativeQuery(sql);
            if (states.length > 0) {
                query.setParameter(1, states);
            }
            return ((Number) query.getSingleResult()).longValue();
        });
    }

    /** A request answered 503 server-busy instead of waiting longer for the database. */
    public void requestShed() {
        loadShed.increment();
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
