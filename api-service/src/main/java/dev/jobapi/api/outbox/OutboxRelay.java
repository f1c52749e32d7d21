package dev.jobapi.api.outbox;

import dev.jobapi.api.config.JobApiConfig;
import dev.jobapi.common.database.PlainTransactions;
import dev.jobapi.common.health.LoopHeartbeats;
import dev.jobapi.common.message.AttemptMessage;
import dev.jobapi.common.message.AttemptTopology;
import dev.jobapi.common.message.BrokerConnection;
import dev.jobapi.common.message.ConfirmedPublisher;
import dev.jobapi.common.message.OutboxWritten;
import dev.jobapi.common.tracing.TraceAttributes;
import dev.jobapi.common.tracing.TraceParent;
import dev.jobapi.common.tracing.Tracing;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.TransactionPhase;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * Moves committed outbox rows to RabbitMQ. Each round claims unsent rows with
 * {@code FOR UPDATE SKIP LOCKED} (so replicas share the work and a crashed replica's rows are simply
 * unlocked and taken by another), publishes them mandatory, waits for the broker's confirms and
 * marks them sent only when every one was routed to a queue. A crash between confirm and commit
 * publishes a row twice, which the worker treats like any redelivery.
 *
 * <p>The owners share the workers fairly (issue 32): the relay keeps at most {@code
 * jobapi.outbox.queue-ahead} messages ready in the work queue, and takes the unsent rows owner by
 * owner in turn, each owner's oldest first and as many a turn as its weight, so one owner's backlog
 * waits in the outbox rather than in front of everyone else's next job.
 */
// Kept on a thread of its own rather than @Scheduled, unlike the other loops, for two
// things the scheduler cannot express. A commit that wrote outbox rows wakes the relay at once (OutboxWritten), so a
// new job's
// message leaves in milliseconds; the simple scheduler fires at most once per 1 s tick
// (SimpleScheduler.CHECK_PERIOD; a shorter every() only logs "not supported - executed with a
// delay"), which would add up to a second to every job. And a refused batch backs off by a doubling
// delay up to 10 s, where every() is one fixed period.
@ApplicationScoped
public class OutboxRelay {

    private static final Logger LOG = Logger.getLogger(OutboxRelay.class);

    /** The relay thread's name and its heartbeat's. */
    private static final String LOOP = "outbox-relay";

    /** The span of one row's publish (OpenTelemetry's messaging convention: operation, destination). */
    static final String PUBLISH_SPAN = "publish " + AttemptTopology.EXCHANGE;

    /** The longest pause between two tries of a batch the broker keeps refusing. */
    private static final Duration LONGEST_BACKOFF = Duration.ofSeconds(10);

    /**
     * The relay's next rows: the owners with unsent rows (a skip scan of {@code
     * outbox_unsent_by_owner}), each one's oldest rows in turns of its weight (owner_share; 1 row a
     * turn by default, 3 for an owner of weight 3), taken turn by turn.
     */
    private static final String NEXT_ROWS_IN_TURN = "WITH RECURSIVE owners (owner_id) AS ("
            + " (SELECT owner_id FROM outbox WHERE sent_at IS NULL ORDER BY owner_id LIMIT 1)"
            + " UNION ALL SELECT (SELECT o.owner_id FROM outbox o WHERE o.sent_at IS NULL"
            + " AND o.owner_id > owners.owner_id ORDER BY o.owner_id LIMIT 1)"
            + " FROM owners WHERE owners.owner_id IS NOT NULL),"
            + " turns AS (SELECT oldest.id, (row_number() OVER (PARTITION BY owners.owner_id ORDER BY oldest.id) - 1)"
            + " / coalesce(share.weight, 1) AS turn"
            + " FROM owners LEFT JOIN owner_share share ON share.owner_id = owners.owner_id"
            + " CROSS JOIN LATERAL (SELECT o.id FROM outbox o WHERE o.sent_at IS NULL"
            + " AND o.owner_id = owners.owner_id ORDER BY o.id LIMIT ?) oldest)"
            + " SELECT o.id, o.attempt_id, o.job_id, o.traceparent, o.tracestate, o.request_id"
            + " FROM outbox o JOIN turns t ON t.id = o.id"
            + " ORDER BY t.turn, o.id LIMIT ? FOR UPDATE OF o SKIP LOCKED";

    private final ConfirmedPublisher publisher;
    private final BrokerConnection broker;
    private final PlainTransactions transactions;
    private final JobApiConfig config;
    private final Clock clock;
    private final LoopHeartbeats heartbeats;
    private final Tracing tracing;
    private final Counter batchesSent;
    private final Counter batchesEmpty;
    private final Counter batchesRefused;
    private final Semaphore wakeups = new Semaphore(0);
    private volatile boolean running;
    private Thread thread;

    OutboxRelay(
            ConfirmedPublisher publisher,
            BrokerConnection broker,
            PlainTransactions transactions,
            JobApiConfig config,
            Clock clock,
            LoopHeartbeats heartbeats,
            Tracing tracing,
            MeterRegistry meters) {
        this.publisher = publisher;
        this.broker = broker;
        this.tracing = tracing;
        this.heartbeats = heartbeats;
        this.transactions = transactions;
        this.config = config;
        this.clock = clock;
        // Each of the relay's transactions counted once it committed: what the relay adds to the
        // database's commits, apart from the jobs' own (bench/run's commits per job).
        String name = "jobapi.outbox.batches";
        String help = "The outbox relay's committed transactions, by outcome: sent (rows published and"
                + " marked sent), empty (no row was waiting), refused (the broker did not take the batch)";
        this.batchesSent =
                Counter.builder(name).description(help).tag("outcome", "sent").register(meters);
        this.batchesEmpty =
                Counter.builder(name).description(help).tag("outcome", "empty").register(meters);
        this.batchesRefused = Counter.builder(name)
                .description(help)
                .tag("outcome", "refused")
                .register(meters);
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

    /** A commit wrote outbox rows: they leave now rather than at the next poll. */
    void wakeAfterCommit(@Observes(during = TransactionPhase.AFTER_SUCCESS) OutboxWritten written) {
        wake();
    }

    private void wake() {
        if (wakeups.availablePermits() == 0) {
            wakeups.release();
        }
    }

    /**
     * Relays until shutdown. Whatever a round throws (a database or broker away, an {@link Error}
     * such as an OutOfMemoryError caused elsewhere in the process) is logged and the loop goes on,
     * keeping the rows. Every batch beats the relay's heartbeat, sent or not: the heartbeat says the
     * loop runs, and a broker that refuses every publish is the broker check's to report (a relay
     * that stopped beating would have Kubernetes restart a pod that a restart cannot cure). A batch
     * that could not be sent backs off, doubling up to {@link #LONGEST_BACKOFF}, instead of claiming
     * the same rows again at once.
     */
    private void loop() {
        Duration backoff = Duration.ZERO;
        while (running) {
            try {
                Batch batch;
                do {
                    batch = relayOneBatch();
                    heartbeats.beat(LOOP);
                } while (running && batch == Batch.FULL);
                backoff = batch == Batch.NOT_SENT ? nextBackoff(backoff) : Duration.ZERO;
                Duration pause = !backoff.isZero()
                        ? backoff
                        : batch == Batch.QUEUE_FULL
                                ? config.outbox().queueRecheck()
                                : config.outbox().pollInterval();
                wakeups.tryAcquire(pause.toMillis(), TimeUnit.MILLISECONDS);
                wakeups.drainPermits();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Throwable e) { // see above: the relay must outlive an Error too
                LOG.errorf(e, "Outbox relay round failed");
                heartbeats.beat(LOOP);
                backoff = nextBackoff(backoff);
                sleepQuietly(backoff);
            }
        }
    }

    private Duration nextBackoff(Duration previous) {
        Duration next = previous.isZero() ? config.outbox().pollInterval() : previous.multipliedBy(2);
        return next.compareTo(LONGEST_BACKOFF) > 0 ? LONGEST_BACKOFF : next;
    }

    /** What one batch did. */
    enum Batch {
        /** Nothing was waiting. */
        EMPTY,
        /** Fewer rows than a batch were waiting: all sent. */
        DONE,
        /** A whole batch was sent: more rows may be waiting. */
        FULL,
        /** The work queue holds its share of ready messages: rows may wait for room in it. */
        QUEUE_FULL,
        /** The broker did not take the batch; its rows stay unsent for a later round. */
        NOT_SENT
    }

    /**
     * Publishes one batch. The rows are marked sent only when the broker confirmed every message as
     * routed to a queue; a refusal, a return (no queue bound) or a timeout leaves the whole batch
     * unsent for a later round (a second message is harmless: the worker's claim is conditional).
     */
    Batch relayOneBatch() {
        int room = roomInTheWorkQueue();
        if (room == 0) {
            return Batch.QUEUE_FULL;
        }
        int take = Math.min(room, config.outbox().batchSize());
        Batch batch = transactions.inTransaction("The outbox relay's batch", connection -> {
            List<Unsent> rows = nextRowsInTurn(connection, take);
            if (rows.isEmpty()) {
                return Batch.EMPTY;
            }
            Array ids = connection.createArrayOf(
                    "bigint", rows.stream().map(Unsent::id).toArray());
            List<Span> spans = rows.stream().map(this::publishSpan).toList();
            List<ConfirmedPublisher.Traced> messages = new ArrayList<>();
            for (int i = 0; i < rows.size(); i++) {
                Unsent row = rows.get(i);
                messages.add(new ConfirmedPublisher.Traced(
                        new AttemptMessage(row.attemptId(), row.jobId()).toJson(),
                        Context.root().with(spans.get(i)),
                        row.requestId()));
            }
            try {
                publisher.publishTraced(AttemptTopology.EXCHANGE, AttemptTopology.ROUTING_KEY, messages);
            } catch (RuntimeException notSent) {
                spans.forEach(span -> Tracing.failed(span, notSent));
                spans.forEach(Span::end);
                recordFailure(connection, ids, rows.size(), notSent);
                return Batch.NOT_SENT;
            }
            spans.forEach(Span::end);
            try (PreparedStatement sent = connection.prepareStatement(
                    "UPDATE outbox SET sent_at = ?, publish_attempts = publish_attempts + 1 WHERE id = ANY(?)")) {
                sent.setObject(1, OffsetDateTime.ofInstant(clock.instant(), ZoneOffset.UTC));
                sent.setArray(2, ids);
                sent.executeUpdate();
            }
            if (rows.size() < take) {
                return Batch.DONE;
            }
            return take == config.outbox().batchSize() ? Batch.FULL : Batch.QUEUE_FULL;
        });
        switch (batch) {
            case EMPTY -> batchesEmpty.increment();
            case NOT_SENT -> batchesRefused.increment();
            case DONE, FULL, QUEUE_FULL -> batchesSent.increment();
        }
        return batch;
    }

    /** An unsent outbox row: the message it stands for and the trace and request that made it. */
    private record Unsent(
            long id, UUID attemptId, UUID jobId, String traceparent, String tracestate, String requestId) {}

    private static List<Unsent> nextRowsInTurn(Connection connection, int take) throws SQLException {
        try (PreparedStatement select = connection.prepareStatement(NEXT_ROWS_IN_TURN)) {
            select.setInt(1, take);
            select.setInt(2, take);
            List<Unsent> rows = new ArrayList<>();
            try (ResultSet row = select.executeQuery()) {
                while (row.next()) {
                    rows.add(new Unsent(
                            row.getLong(1),
                            row.getObject(2, UUID.class),
                            row.getObject(3, UUID.class),
                            row.getString(4),
                            row.getString(5),
                            row.getString(6)));
                }
            }
            return rows;
        }
    }

    /**
     * How many more messages may wait ready in the work queue. A depth that cannot be read (the
     * broker away) leaves room for a batch: its publish fails, and is recorded, as it always did.
     */
    private int roomInTheWorkQueue() {
        long ready;
        try {
            ready = broker.withChannel(channel ->
                    (long) channel.queueDeclarePassive(AttemptTopology.QUEUE).getMessageCount());
        } catch (RuntimeException unknown) {
            return config.outbox().batchSize();
        }
        return (int) Math.max(0, config.outbox().queueAhead() - ready);
    }

    /** The producer span of one row's publish: a child of the trace the row kept. */
    private Span publishSpan(Unsent row) {
        Context stored = tracing.resume(new TraceParent(row.traceparent(), row.tracestate()));
        return tracing.start(PUBLISH_SPAN, SpanKind.PRODUCER, stored, row.jobId(), row.attemptId())
                .setAttribute(TraceAttributes.MESSAGING_SYSTEM, "rabbitmq")
                .setAttribute(TraceAttributes.MESSAGING_DESTINATION, AttemptTopology.EXCHANGE)
                .setAttribute(TraceAttributes.MESSAGING_OPERATION, "send");
    }

    private static void recordFailure(Connection connection, Array outboxIds, int count, Exception failure)
            throws SQLException {
        LOG.warnf("%d outbox row(s) not confirmed by the broker, will retry: %s", count, failure.toString());
        try (PreparedStatement failed = connection.prepareStatement(
                "UPDATE outbox SET publish_attempts = publish_attempts + 1, last_error = ? WHERE id = ANY(?)")) {
            failed.setString(1, failure.toString());
            failed.setArray(2, outboxIds);
            failed.executeUpdate();
        }
    }

    private void sleepQuietly(Duration pause) {
        try {
            Thread.sleep(pause.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
