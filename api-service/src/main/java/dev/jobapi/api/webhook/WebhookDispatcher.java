package dev.jobapi.api.webhook;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jobapi.api.config.JobApiConfig;
import dev.jobapi.api.stream.EventCursor;
import dev.jobapi.common.database.PlainTransactions;
import dev.jobapi.common.database.Rows;
import dev.jobapi.common.health.BackgroundLoops;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.Scheduled.ConcurrentExecution;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * Sends the webhook outbox. Every api process, each round: takes due deliveries with {@code FOR
 * UPDATE SKIP LOCKED} and leases them (their next try moves past the request timeout) in one short
 * transaction, sends them all at once with no transaction open, then records each outcome. A 2xx is
 * delivered; anything else is tried again after a doubling, jittered backoff (or the receiver's
 * Retry-After), with the same webhook-id, until the give-up time, when it is failed and shown in the
 * endpoint's delivery log. A process that dies between a send and its record leaves the lease to
 * expire, and another process sends the delivery again, with the same webhook-id: at least once,
 * and receivers deduplicate by the id, as the specification asks.
 */
@ApplicationScoped
public class WebhookDispatcher {

    private static final Logger LOG = Logger.getLogger(WebhookDispatcher.class);

    /** This loop's scheduler identity and heartbeat name. */
    static final String LOOP = "webhook-dispatcher";

    /** The longest error text kept in the delivery log. */
    private static final int MAX_ERROR_LENGTH = 500;

    /**
     * The due deliveries, leased, with what a send needs: the endpoint's url and secrets, and the
     * event (none for a test delivery).
     */
    private static final String TAKE_DUE = "WITH due AS (SELECT id FROM webhook_delivery"
            + " WHERE state = 'pending' AND next_attempt_at <= now() ORDER BY next_attempt_at LIMIT ?"
            + " FOR UPDATE SKIP LOCKED),"
            + " taken AS (UPDATE webhook_delivery d SET attempts = d.attempts + 1, last_attempt_at = now(),"
            + " next_attempt_at = now() + ?::interval FROM due WHERE d.id = due.id RETURNING d.*)"
            + " SELECT t.id, t.webhook_id, t.type, t.job_id, t.attempts, t.retry_from, t.created_at, t.endpoint_id,"
            + " w.url, w.secret, CASE WHEN w.previous_secret_until > now() THEN w.previous_secret END,"
            + " w.disabled_reason, e.id, e.tx::text, e.at, e.attempt_id, e.detail"
            + " FROM taken t JOIN webhook_endpoint w ON w.id = t.endpoint_id"
            + " LEFT JOIN job_event e ON e.job_id = t.job_id AND e.id = t.event_id";

    /** The loop runs outside any request: its transactions are plain JDBC ones. */
    private static final String OUTBOX_WORK = "Reading or writing the webhook outbox";

    private final PlainTransactions transactions;
    private final WebhookDestinations destinations;
    private final JobApiConfig.Webhooks config;
    private final BackgroundLoops loops;
    private final ObjectMapper json;
    private final Clock clock;
    private final Counter delivered;
    private final Counter retried;
    private final Counter failed;
    /** Built by the first send ({@link #http()}). */
    private HttpClient http;

    WebhookDispatcher(
            PlainTransactions transactions,
            WebhookDestinations destinations,
            JobApiConfig config,
            BackgroundLoops loops,
            ObjectMapper json,
            Clock clock,
            MeterRegistry meters) {
        this.transactions = transactions;
        this.destinations = destinations;
        this.config = config.webhooks();
        this.loops = loops;
        this.json = json;
        this.clock = clock;
        String name = "jobapi.webhook.tries";
        String help = "Webhook tries by outcome: delivered, retried later, or failed for good";
        this.delivered = Counter.builder(name)
                .description(help)
                .tag("outcome", "delivered")
                .register(meters);
        this.retried = Counter.builder(name)
                .description(help)
                .tag("outcome", "retried")
                .register(meters);
        this.failed =
                Counter.builder(name).description(help).tag("outcome", "failed").register(meters);
    }

    void expectHeartbeat(@Observes StartupEvent event) {
        loops.expect(LOOP, config.pollInterval(), config.requestTimeout().multipliedBy(2));
    }

    @Scheduled(
            identity = LOOP,
            every = "${jobapi.webhooks.poll-interval}",
            concurrentExecution = ConcurrentExecution.SKIP,
            skipExecutionIf = BackgroundLoops.class)
    void scheduledDispatch() {
        loops.round(LOOP, this::dispatchDue);
    }

    /** Sends due deliveries, batch after batch, until none is due or shutdown began. */
    void dispatchDue() {
        int sent;
        do {
            sent = dispatchOneBatch();
        } while (sent == config.batchSize() && !loops.stopping());
    }

    /** One delivery as taken: what to send, where, signed with which secrets. */
    private record Due(
            long id,
            String webhookId,
            int attempts,
            Instant retryFrom,
            UUID endpointId,
            URI url,
            List<String> secrets,
            String disabledReason,
            byte[] body) {}

    /** How one try went. */
    private record Outcome(Due delivery, Integer status, String error, Duration retryAfter) {
        boolean delivered() {
            return status != null && status >= 200 && status < 300;
        }

        boolean gone() {
            return status != null && status == 410;
        }
    }

    private int dispatchOneBatch() {
        List<Due> due = take();
        List<CompletableFuture<Outcome>> tries = due.stream().map(this::send).toList();
        List<Outcome> outcomes = new ArrayList<>();
        for (CompletableFuture<Outcome> attempt : tries) {
            outcomes.add(attempt.join());
        }
        if (!outcomes.isEmpty()) {
            record(outcomes);
        }
        return due.size();
    }

    private List<Due> take() {
        Duration lease = config.requestTimeout().plusSeconds(30);
        return transactions.inTransaction(OUTBOX_WORK, connection -> {
            try (PreparedStatement select = connection.prepareStatement(TAKE_DUE)) {
                select.setInt(1, config.batchSize());
                select.setString(2, lease.toMillis() + " milliseconds");
                List<Due> taken = new ArrayList<>();
                try (ResultSet rows = select.executeQuery()) {
                    while (rows.next()) {
                        taken.add(due(rows));
                    }
                }
                return taken;
            }
        });
    }

    private Due due(ResultSet row) throws SQLException {
        List<String> secrets = new ArrayList<>();
        secrets.add(row.getString(10));
        Optional.ofNullable(row.getString(11)).ifPresent(secrets::add);
        String type = row.getString(3);
        Map<String, Object> data = new LinkedHashMap<>();
        Instant occurred;
        if (row.getObject(13) == null) {
            data.put("endpointId", row.getObject(8, UUID.class));
            occurred = Rows.instant(row, 7);
        } else {
            long eventId = row.getLong(13);
            data.put("jobId", row.getObject(4, UUID.class));
            data.put("attemptId", row.getObject(16, UUID.class));
            data.put("eventId", eventId);
            data.put("cursor", new EventCursor(Long.parseLong(row.getString(14)), eventId).toString());
            data.put("detail", row.getString(17));
            occurred = Rows.instant(row, 15);
        }
        Map<String, Object> payload = new LinkedHashMap<>();
        payload.put("type", type);
        payload.put("timestamp", occurred.toString());
        payload.put("data", data);
        byte[] body;
        try {
            body = json.writeValueAsBytes(payload);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("A map of strings, numbers and ids always serializes", e);
        }
        return new Due(
                row.getLong(1),
                row.getString(2),
                row.getInt(5),
                Rows.instant(row, 6),
                row.getObject(8, UUID.class),
                URI.create(row.getString(9)),
                secrets,
                row.getString(12),
                body);
    }

    /**
     * The client of every delivery, built by the first: building it loads the JDK's default TLS
     * context and its trust store, 0.2 s of each api start that most deployments, with no webhook,
     * would never use (bench/ANALYSIS.md). Never redirected: a redirect would go where the
     * destination check never looked, and the specification counts a 3xx as a failure. HTTP/1.1: no
     * cleartext upgrade offered to receivers.
     */
    private synchronized HttpClient http() {
        if (http == null) {
            http = HttpClient.newBuilder()
                    .followRedirects(HttpClient.Redirect.NEVER)
                    .version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(config.requestTimeout())
                    .build();
        }
        return http;
    }

    private CompletableFuture<Outcome> send(Due delivery) {
        if (delivery.disabledReason() != null) {
            return CompletableFuture.completedFuture(
                    new Outcome(delivery, null, "the endpoint is disabled (" + delivery.disabledReason() + ")", null));
        }
        Optional<String> refused = destinations.refusal(delivery.url());
        if (refused.isPresent()) {
            return CompletableFuture.completedFuture(new Outcome(delivery, null, "not sent: " + refused.get(), null));
        }
        long timestamp = clock.instant().getEpochSecond();
        HttpRequest request = HttpRequest.newBuilder(delivery.url())
                .timeout(config.requestTimeout())
                .header("Content-Type", "application/json")
                .header("User-Agent", "jobapi-webhooks")
                .header("webhook-id", delivery.webhookId())
                .header("webhook-timestamp", Long.toString(timestamp))
                .header(
                        "webhook-signature",
                        WebhookSignatures.header(delivery.secrets(), delivery.webhookId(), timestamp, delivery.body()))
                .POST(HttpRequest.BodyPublishers.ofByteArray(delivery.body()))
                .build();
        // The answer's body is never read: closing its stream at once ends a receiver that would
        // stream one forever.
        return http().sendAsync(request, HttpResponse.BodyHandlers.ofInputStream())
                .orTimeout(config.requestTimeout().toMillis() + 1_000, TimeUnit.MILLISECONDS)
                .handle((response, failure) -> {
                    if (failure != null) {
                        Throwable cause = failure.getCause() != null ? failure.getCause() : failure;
                        return new Outcome(delivery, null, cause.toString(), null);
                    }
                    closeQuietly(response.body());
                    return new Outcome(
                            delivery,
                            response.statusCode(),
                            "answered " + response.statusCode(),
                            retryAfter(response.headers().firstValue("Retry-After")));
                });
    }

    private void record(List<Outcome> outcomes) {
        Instant now = clock.instant();
        transactions.inTransaction(OUTBOX_WORK, connection -> {
            for (Outcome outcome : outcomes) {
                Due delivery = outcome.delivery();
                if (outcome.delivered()) {
                    delivered.increment();
                    update(
                            connection,
                            "UPDATE webhook_delivery SET state = 'delivered', delivered_at = now(), last_status = ?,"
                                    + " last_error = NULL WHERE id = ? AND state = 'pending'",
                            outcome.status(),
                            delivery.id());
                    continue;
                }
                String error = abbreviate(outcome.error());
                if (outcome.gone()) {
                    failed.increment();
                    disable(connection, delivery.endpointId(), "it answered 410 Gone");
                    failPendingOf(connection, delivery.endpointId(), "the endpoint answered 410 Gone");
                    continue;
                }
                Instant next =
                        now.plus(outcome.retryAfter() != null ? outcome.retryAfter() : backoff(delivery.attempts()));
                if (delivery.disabledReason() != null
                        || next.isAfter(delivery.retryFrom().plus(config.giveUpAfter()))) {
                    failed.increment();
                    LOG.infof("Webhook %s failed after %d tries: %s", delivery.webhookId(), delivery.attempts(), error);
                    update(
                            connection,
                            "UPDATE webhook_delivery SET state = 'failed', last_status = ?, last_error = ?"
                                    + " WHERE id = ? AND state = 'pending'",
                            outcome.status(),
                            error,
                            delivery.id());
                } else {
                    retried.increment();
                    update(
                            connection,
                            "UPDATE webhook_delivery SET next_attempt_at = ?, last_status = ?, last_error = ?"
                                    + " WHERE id = ? AND state = 'pending'",
                            OffsetDateTime.ofInstant(next, ZoneOffset.UTC),
                            outcome.status(),
                            error,
                            delivery.id());
                }
            }
            return null;
        });
    }

    /** The wait before try {@code attempts + 1}: the first retry's, doubled per try, capped, ±20% jitter. */
    Duration backoff(int attempts) {
        Duration wait = config.firstRetry();
        for (int i = 1; i < attempts && wait.compareTo(config.longestRetry()) < 0; i++) {
            wait = wait.multipliedBy(2);
        }
        if (wait.compareTo(config.longestRetry()) > 0) {
            wait = config.longestRetry();
        }
        double jitter = 0.8 + 0.4 * ThreadLocalRandom.current().nextDouble();
        return Duration.ofMillis((long) (wait.toMillis() * jitter));
    }

    /** A Retry-After in seconds, bounded by the longest retry; a date or nonsense is ignored. */
    private Duration retryAfter(Optional<String> header) {
        try {
            return header.map(value -> Duration.ofSeconds(Long.parseLong(value.trim())))
                    .filter(wait -> !wait.isNegative())
                    .map(wait -> wait.compareTo(config.longestRetry()) > 0 ? config.longestRetry() : wait)
                    .orElse(null);
        } catch (NumberFormatException notSeconds) {
            return null;
        }
    }

    static void failPendingOf(Connection connection, UUID endpointId, String why) throws SQLException {
        update(
                connection,
                "UPDATE webhook_delivery SET state = 'failed', last_error = ? WHERE endpoint_id = ? AND state = 'pending'",
                why,
                endpointId);
    }

    private static void disable(Connection connection, UUID endpointId, String why) throws SQLException {
        update(
                connection,
                "UPDATE webhook_endpoint SET disabled_at = now(), disabled_reason = ? WHERE id = ? AND disabled_at IS NULL",
                why,
                endpointId);
    }

    private static void update(Connection connection, String sql, Object... values) throws SQLException {
        try (PreparedStatement update = connection.prepareStatement(sql)) {
            for (int i = 0; i < values.length; i++) {
                update.setObject(i + 1, values[i]);
            }
            update.executeUpdate();
        }
    }

    private static String abbreviate(String text) {
        return text == null || text.length() <= MAX_ERROR_LENGTH ? text : text.substring(0, MAX_ERROR_LENGTH);
    }

    private static void closeQuietly(InputStream body) {
        try {
            body.close();
        } catch (java.io.IOException ignored) {
            // The answer's body is not wanted; a failure to discard it changes nothing.
        }
    }
}
