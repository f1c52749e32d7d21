package dev.jobapi.api.webhook;

import static dev.jobapi.common.database.Rows.instant;

import dev.jobapi.api.config.JobApiConfig;
import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.common.database.SqlWork;
import dev.jobapi.common.job.JobEventKind;
import io.agroal.api.AgroalDataSource;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.transaction.Transactional;
import java.net.URI;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * An owner's webhook endpoints and their delivery logs: registration (with the destination check),
 * deletion, secret rotation, a test delivery and a manual retry of a failed delivery. Every read and
 * write is the owner's own: another caller's endpoint is not found.
 */
@ApplicationScoped
public class WebhookEndpoints {

    /** The event kinds an endpoint gets when its registration names none: the ends of a job and its reviews. */
    static final List<String> DEFAULT_EVENTS = List.of(
            JobEventKind.JOB_COMPLETED.wireName(),
            JobEventKind.JOB_CANCELLED.wireName(),
            JobEventKind.JOB_NEEDS_REVIEW.wireName());

    /** The type of a test delivery's payload. */
    static final String TEST_TYPE = "webhook.test";

    static final int MAX_DESCRIPTION_LENGTH = 200;

    private static final String ENDPOINT_COLUMNS =
            "id, url, event_types, description, created_at, disabled_reason, previous_secret_until";
    private static final String DELIVERY_COLUMNS = "webhook_id, type, job_id, event_id, state, attempts, created_at,"
            + " last_attempt_at, last_status, last_error, next_attempt_at, delivered_at";

    private final AgroalDataSource database;
    private final WebhookDestinations destinations;
    private final JobApiConfig.Webhooks config;
    private final Clock clock;

    WebhookEndpoints(AgroalDataSource database, WebhookDestinations destinations, JobApiConfig config, Clock clock) {
        this.database = database;
        this.destinations = destinations;
        this.config = config.webhooks();
        this.clock = clock;
    }

    /** A registration as asked: events may be null (the defaults), description too. */
    public record Registration(String url, List<String> events, String description) {}

    /** Registers an endpoint; its answer is the only one that shows the secret besides a rotation's. */
    @Transactional
    public WebhookEndpoint register(String owner, Registration registration) {
        String url = registration.url();
        destinations.malformed(url).ifPresent(why -> {
            throw new ProblemException(Problem.INVALID_REQUEST, why + ".");
        });
        destinations.refusal(URI.create(url)).ifPresent(why -> {
            throw new ProblemException(Problem.WEBHOOK_DESTINATION_REFUSED, "Refused " + url + ": " + why + ".");
        });
        List<String> events = wantedEvents(registration.events());
        String description = registration.description();
        if (description != null && description.length() > MAX_DESCRIPTION_LENGTH) {
            throw new ProblemException(
                    Problem.INVALID_REQUEST, "description is longer than " + MAX_DESCRIPTION_LENGTH + " characters.");
        }
        return sql(connection -> {
            // One registration of an owner at a time, so the count below bounds their endpoints.
            try (PreparedStatement lock = connection.prepareStatement(
                    "SELECT pg_advisory_xact_lock(hashtext('webhook_endpoint'), hashtext(?))")) {
                lock.setString(1, owner);
                lock.execute();
            }
            try (PreparedStatement count = connection.prepareStatement(
                    "SELECT count(*) FROM webhook_endpoint WHERE owner_id = ? AND disabled_at IS NULL")) {
                count.setString(1, owner);
                try (ResultSet row = count.executeQuery()) {
                    row.next();
                    if (row.getLong(1) >= config.maxEndpointsPerOwner()) {
                        throw new ProblemException(
                                Problem.WEBHOOK_LIMIT_REACHED,
                                "You have " + row.getLong(1) + " endpoints; delete one to register another.");
                    }
                }
            }
            String secret = WebhookSignatures.newSecret();
            try (PreparedStatement insert = connection.prepareStatement("INSERT INTO webhook_endpoint"
                    + " (id, owner_id, url, event_types, description, secret, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
                    + " ON CONFLICT (owner_id, url) WHERE disabled_at IS NULL DO NOTHING RETURNING "
                    + ENDPOINT_COLUMNS)) {
                insert.setObject(1, UUID.randomUUID());
                insert.setString(2, owner);
                insert.setString(3, url);
                insert.setArray(4, connection.createArrayOf("text", events.toArray()));
                insert.setString(5, description);
                insert.setString(6, secret);
                insert.setObject(7, OffsetDateTime.ofInstant(clock.instant(), ZoneOffset.UTC));
                try (ResultSet row = insert.executeQuery()) {
                    if (!row.next()) {
                        throw new ProblemException(
                                Problem.WEBHOOK_EXISTS,
                                "You have an endpoint with this url: " + existingId(connection, owner, url) + ".");
                    }
                    return endpoint(row).withSecret(secret);
                }
            }
        });
    }

    @Transactional
    public List<WebhookEndpoint> list(String owner) {
        return sql(connection -> {
            try (PreparedStatement select = connection.prepareStatement("SELECT " + ENDPOINT_COLUMNS
                    + " FROM webhook_endpoint WHERE owner_id = ? AND deleted_at IS NULL ORDER BY created_at, id")) {
                select.setString(1, owner);
                List<WebhookEndpoint> endpoints = new ArrayList<>();
                try (ResultSet rows = select.executeQuery()) {
                    while (rows.next()) {
                        endpoints.add(endpoint(rows));
                    }
                }
                return endpoints;
            }
        });
    }

    @Transactional
    public WebhookEndpoint get(String owner, UUID id) {
        return sql(connection -> {
            try (PreparedStatement select = connection.prepareStatement("SELECT " + ENDPOINT_COLUMNS
                    + " FROM webhook_endpoint WHERE id = ? AND owner_id = ? AND deleted_at IS NULL")) {
                select.setObject(1, id);
                select.setString(2, owner);
                try (ResultSet row = select.executeQuery()) {
                    if (!row.next()) {
                        throw notFound(id);
                    }
                    return endpoint(row);
                }
            }
        });
    }

    /** Deletes the endpoint: nothing more is sent to it, and its pending deliveries end as failed. */
    @Transactional
    public void delete(String owner, UUID id) {
        sql(connection -> {
            try (PreparedStatement update =
                    connection.prepareStatement("UPDATE webhook_endpoint SET deleted_at = now(),"
                            + " disabled_at = coalesce(disabled_at, now()), disabled_reason = coalesce(disabled_reason, 'deleted')"
                            + " WHERE id = ? AND owner_id = ? AND deleted_at IS NULL")) {
                update.setObject(1, id);
                update.setString(2, owner);
                if (update.executeUpdate() == 0) {
                    throw notFound(id);
                }
            }
            WebhookDispatcher.failPendingOf(connection, id, "the endpoint was deleted");
            return null;
        });
    }

    /**
     * A new secret; the one it replaces still signs beside it for the configured overlap, so
     * receivers can switch without missing a delivery. A secret rotated out earlier stops at once.
     */
    @Transactional
    public WebhookEndpoint rotateSecret(String owner, UUID id) {
        String secret = WebhookSignatures.newSecret();
        Instant overlapEnds = clock.instant().plus(config.secretOverlap());
        return sql(connection -> {
            try (PreparedStatement update = connection.prepareStatement("UPDATE webhook_endpoint"
                    + " SET previous_secret = secret, previous_secret_until = ?, secret = ?"
                    + " WHERE id = ? AND owner_id = ? AND deleted_at IS NULL RETURNING " + ENDPOINT_COLUMNS)) {
                update.setObject(1, OffsetDateTime.ofInstant(overlapEnds, ZoneOffset.UTC));
                update.setString(2, secret);
                update.setObject(3, id);
                update.setString(4, owner);
                try (ResultSet row = update.executeQuery()) {
                    if (!row.next()) {
                        throw notFound(id);
                    }
                    return endpoint(row).withSecret(secret);
                }
            }
        });
    }

    /** Queues a delivery of type webhook.test to the endpoint, signed and retried like any other. */
    @Transactional
    public WebhookDelivery sendTest(String owner, UUID id) {
        requireEnabled(get(owner, id));
        return sql(connection -> {
            try (PreparedStatement insert = connection.prepareStatement("INSERT INTO webhook_delivery"
                    + " (endpoint_id, type) VALUES (?, ?) RETURNING " + DELIVERY_COLUMNS)) {
                insert.setObject(1, id);
                insert.setString(2, TEST_TYPE);
                try (ResultSet row = insert.executeQuery()) {
                    row.next();
                    return delivery(row);
                }
            }
        });
    }

    /** The endpoint's newest deliveries, newest first; of one state when {@code state} is not null. */
    @Transactional
    public List<WebhookDelivery> deliveries(String owner, UUID id, String state, int limit) {
        get(owner, id);
        return sql(connection -> {
            try (PreparedStatement select = connection.prepareStatement("SELECT " + DELIVERY_COLUMNS
                    + " FROM webhook_delivery WHERE endpoint_id = ? AND (?::text IS NULL OR state = ?)"
                    + " ORDER BY id DESC LIMIT ?")) {
                select.setObject(1, id);
                select.setString(2, state);
                select.setString(3, state);
                select.setInt(4, limit);
                List<WebhookDelivery> deliveries = new ArrayList<>();
                try (ResultSet rows = select.executeQuery()) {
                    while (rows.next()) {
                        deliveries.add(delivery(rows));
                    }
                }
                return deliveries;
            }
        });
    }

    /**
     * Sends a failed delivery again, with the same webhook-id, retried for another give-up period;
     * 409 unless it failed.
     */
    @Transactional
    public WebhookDelivery retry(String owner, UUID id, String webhookId) {
        requireEnabled(get(owner, id));
        return sql(connection -> {
            try (PreparedStatement update = connection.prepareStatement("UPDATE webhook_delivery"
                    + " SET state = 'pending', retry_from = now(), next_attempt_at = now()"
                    + " WHERE endpoint_id = ? AND webhook_id = ? AND state = 'failed' RETURNING " + DELIVERY_COLUMNS)) {
                update.setObject(1, id);
                update.setString(2, webhookId);
                try (ResultSet row = update.executeQuery()) {
                    if (row.next()) {
                        return delivery(row);
                    }
                }
            }
            try (PreparedStatement select = connection.prepareStatement(
                    "SELECT state FROM webhook_delivery WHERE endpoint_id = ? AND webhook_id = ?")) {
                select.setObject(1, id);
                select.setString(2, webhookId);
                try (ResultSet row = select.executeQuery()) {
                    if (!row.next()) {
                        throw new ProblemException(
                                Problem.NOT_FOUND, "The endpoint has no delivery " + webhookId + ".");
                    }
                    throw new ProblemException(
                            Problem.WEBHOOK_DELIVERY_NOT_FAILED,
                            "The delivery is " + row.getString(1) + "; only a failed one can be retried.");
                }
            }
        });
    }

    private static void requireEnabled(WebhookEndpoint endpoint) {
        if (endpoint.disabledReason() != null) {
            throw new ProblemException(
                    Problem.WEBHOOK_DISABLED, "The endpoint is disabled (" + endpoint.disabledReason() + ").");
        }
    }

    private static List<String> wantedEvents(List<String> asked) {
        if (asked == null || asked.isEmpty()) {
            return DEFAULT_EVENTS;
        }
        Set<String> known = new LinkedHashSet<>();
        Arrays.stream(JobEventKind.values()).forEach(kind -> known.add(kind.wireName()));
        for (String event : asked) {
            if (!known.contains(event)) {
                throw new ProblemException(
                        Problem.INVALID_REQUEST, "events: unknown event kind '" + event + "'; known: " + known + ".");
            }
        }
        return List.copyOf(new LinkedHashSet<>(asked));
    }

    private static UUID existingId(Connection connection, String owner, String url) throws SQLException {
        try (PreparedStatement select = connection.prepareStatement(
                "SELECT id FROM webhook_endpoint WHERE owner_id = ? AND url = ? AND disabled_at IS NULL")) {
            select.setString(1, owner);
            select.setString(2, url);
            try (ResultSet row = select.executeQuery()) {
                row.next();
                return row.getObject(1, UUID.class);
            }
        }
    }

    private static ProblemException notFound(UUID id) {
        return new ProblemException(Problem.NOT_FOUND, "You have no webhook endpoint " + id + ".");
    }

    private static WebhookEndpoint endpoint(ResultSet row) throws SQLException {
        Array events = row.getArray(3);
        return new WebhookEndpoint(
                row.getObject(1, UUID.class),
                row.getString(2),
                List.of((String[]) events.getArray()),
                row.getString(4),
                instant(row, 5),
                row.getString(6),
                instant(row, 7),
                null);
    }

    private static WebhookDelivery delivery(ResultSet row) throws SQLException {
        String state = row.getString(5);
        return new WebhookDelivery(
                row.getString(1),
                row.getString(2),
                row.getObject(3, UUID.class),
                row.getObject(4, Long.class),
                state,
                row.getInt(6),
                instant(row, 7),
                instant(row, 8),
                row.getObject(9, Integer.class),
                row.getString(10),
                state.equals("pending") ? instant(row, 11) : null,
                instant(row, 12));
    }

    /** Runs the work in the caller's transaction; a database that cannot answer is a 503. */
    private <T> T sql(SqlWork<T> work) {
        try (Connection connection = database.getConnection()) {
            return work.on(connection);
        } catch (SQLException databaseAway) {
            throw new ProblemException(Problem.SERVER_BUSY, "The database could not answer now; retry shortly.");
        }
    }
}
