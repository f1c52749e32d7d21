package dev.jobapi.client;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import dev.jobapi.client.model.AcceptanceRun;
import dev.jobapi.client.model.Attempt;
import dev.jobapi.client.model.Budget;
import dev.jobapi.client.model.DeadLetterPage;
import dev.jobapi.client.model.EventPage;
import dev.jobapi.client.model.FeedEvent;
import dev.jobapi.client.model.Job;
import dev.jobapi.client.model.JobPage;
import dev.jobapi.client.model.JobState;
import dev.jobapi.client.model.KillSwitch;
import dev.jobapi.client.model.NewJob;
import dev.jobapi.client.model.OwnerBudgets;
import dev.jobapi.client.model.OwnerShare;
import dev.jobapi.client.model.Price;
import dev.jobapi.client.model.ProviderPauseState;
import dev.jobapi.client.model.ProviderStatus;
import dev.jobapi.client.model.ReplayResult;
import dev.jobapi.client.model.Submitted;
import dev.jobapi.client.model.TimelineEvent;
import dev.jobapi.client.model.WebhookDelivery;
import dev.jobapi.client.model.WebhookEndpoint;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A client of the job API. Creates follow the Stripe-SDK model: each intention gets one
 * Idempotency-Key, minted before the first try and kept (in {@link IdempotencyKeys}) across every
 * retry until the API has decided it, so a dropped connection after the server committed replays the
 * job instead of making a second one. Reads, cancel and the kill switch are idempotent and retried on
 * the same rules; a dead-letter replay or a quarantine resolution is retried only when the connection
 * was refused (the request never left). Errors come back as {@link ApiProblem} with a typed {@link
 * ProblemCode}, or as {@link ApiUnreachableException} when no answer decided anything.
 *
 * <p>Thread-safe; one instance per base URL and caller.
 */
public final class JobApiClient {

    /** {@code <target>; rel="next"} in a Link header (RFC 8288), as the API sends it. */
    private static final Pattern NEXT_LINK = Pattern.compile("<([^>]+)>\\s*;\\s*rel=\"?next\"?");

    private static final String IDEMPOTENCY_KEY = "Idempotency-Key";
    private static final String REQUEST_ID = "X-Request-Id";
    private static final String JSON = "application/json";
    private static final Duration FIRST_POLL = Duration.ofMillis(200);
    private static final Duration LONGEST_POLL = Duration.ofSeconds(2);

    private static final ObjectMapper MAPPER = JsonMapper.builder()
            .addModule(new JavaTimeModule())
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.READ_UNKNOWN_ENUM_VALUES_USING_DEFAULT_VALUE)
            // Sorted keys: the same request always has the same bytes, hence the same intention.
            .configure(JsonNodeFeature.WRITE_PROPERTIES_SORTED, true)
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            .build();

    private final URI baseUri;
    private final HttpClient http;
    private final Supplier<String> token;
    private final RetryPolicy retries;
    private final IdempotencyKeys keys;
    private final Duration requestTimeout;
    private final Sleeper sleeper;
    private final Clock clock;

    private JobApiClient(Builder builder) {
        String base = builder.baseUri.toString();
        this.baseUri = URI.create(base.endsWith("/") ? base.substring(0, base.length() - 1) : base);
        this.http = builder.http != null
                ? builder.http
                : HttpClient.newBuilder()
                        // The api speaks HTTP/1.1 on its plain port; the JDK's default first request would
                        // ask to upgrade to h2c, which a request with a body does not survive there.
                        .version(HttpClient.Version.HTTP_1_1)
                        .connectTimeout(builder.connectTimeout)
                        .build();
        this.token = builder.token;
        this.retries = builder.retries;
        this.keys = builder.keys;
        this.requestTimeout = builder.requestTimeout;
        this.sleeper = builder.sleeper;
        this.clock = builder.clock;
    }

    public static Builder builder(URI baseUri) {
        return new Builder(baseUri);
    }

    // ---------------------------------------------------------------- jobs

    /** POST /jobs with this intention's key (minted now, or the pending one of an unanswered earlier call). */
    public Submitted<Job> submit(NewJob job) {
        return create("/jobs", body(job), null, Job.class);
    }

    /** POST /jobs with a key the caller chose (say, its own order id). */
    public Submitted<Job> submit(NewJob job, String idempotencyKey) {
        return create("/jobs", body(job), idempotencyKey, Job.class);
    }

    public Job job(UUID jobId) {
        return read(get("/jobs/" + jobId), Job.class);
    }

    /** GET /jobs: the caller's jobs, newest first; {@code state} and {@code cursor} may be null. */
    public JobPage jobs(JobState state, int limit, String cursor) {
        StringBuilder path = new StringBuilder("/jobs?limit=").append(limit);
        if (state != null) {
            path.append("&state=").append(state.wireName());
        }
        if (cursor != null) {
            path.append("&cursor=").append(URLEncoder.encode(cursor, StandardCharsets.UTF_8));
        }
        return read(get(path.toString()), JobPage.class);
    }

    /** The job's whole timeline in commit order, following the API's pages (Link rel=next). */
    public List<TimelineEvent> timeline(UUID jobId) {
        List<TimelineEvent> events = new ArrayList<>();
        Optional<String> page = Optional.of("/jobs/" + jobId + "/timeline");
        while (page.isPresent()) {
            Answer answer = get(page.get());
            events.addAll(read(answer, new TypeReference<List<TimelineEvent>>() {}));
            page = answer.header("Link").flatMap(JobApiClient::nextPage);
        }
        return events;
    }

    /**
     * The target of a {@code Link: <target>; rel="next"} header, when it has one. Only a path on this
     * API is followed ({@code /...}, never {@code //host}): the request carries our bearer token, and
     * a target such as {@code <@evil.example/x>} or {@code <https://evil.example/x>} would send it to
     * another host. Such a Link is refused with an {@link IllegalStateException}.
     */
    static Optional<String> nextPage(String link) {
        Matcher next = NEXT_LINK.matcher(link);
        if (!next.find()) {
            return Optional.empty();
        }
        String target = next.group(1);
        if (!target.startsWith("/")
                || target.startsWith("//")
                || target.contains("\\")
                || target.chars().anyMatch(c -> c <= ' ' || c == 0x7f)) {
            throw new IllegalStateException("The server's Link names a target off this API, not followed: <"
                    + target.replaceAll("[^\\x21-\\x7e]", "?") + ">");
        }
        return Optional.of(target);
    }

    /** A provider's name as one path segment: whatever it holds, it stays inside that segment. */
    private static String segment(String name) {
        return URLEncoder.encode(name, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** The winning attempt's patch (409 no-output before a winner exists). */
    public String output(UUID jobId) {
        Answer answer = send(new Call(
                "GET", "/jobs/" + jobId + "/output", null, null, Safety.IDEMPOTENT, Map.of("Accept", "text/x-diff")));
        return new String(answer.body(), StandardCharsets.UTF_8);
    }

    /** POST /jobs/{id}/attempts: another attempt at {@code provider} (null: the job's provider). */
    public Submitted<Attempt> requestAttempt(UUID jobId, String provider) {
        ObjectNode body = MAPPER.createObjectNode();
        if (provider != null) {
            body.put("provider", provider);
        }
        return create("/jobs/" + jobId + "/attempts", bytes(body), null, Attempt.class);
    }

    /**
     * The review verb: a reviewer supersedes the open attempts, with a reason on record, and starts a
     * new one at {@code provider}.
     */
    public Submitted<Attempt> supersede(UUID jobId, String provider, String reason) {
        ObjectNode body = MAPPER.createObjectNode();
        if (provider != null) {
            body.put("provider", provider);
        }
        body.putObject("supersede").put("reason", reason);
        return create("/jobs/" + jobId + "/attempts", bytes(body), null, Attempt.class);
    }

    /** POST /jobs/{id}/cancel; cancelling a cancelled job is fine, so it is retried like a read. */
    public Job cancel(UUID jobId) {
        return read(
                send(new Call("POST", "/jobs/" + jobId + "/cancel", null, null, Safety.IDEMPOTENT, Map.of())),
                Job.class);
    }

    /**
     * Polls the job until it is completed or cancelled and returns it. {@code onChange} sees every
     * new version. A poll that saw no change waits longer before the next (up to two seconds); a
     * change starts again at 200 ms. Polls are conditional ({@code If-None-Match}) whenever the API
     * sends an {@code ETag}, so an unchanged job costs a 304.
     *
     * @throws AwaitTimeoutException when {@code timeout} passes first
     */
    public Job awaitTerminal(UUID jobId, Duration timeout, Consumer<Job> onChange) {
        Instant deadline = clock.instant().plus(timeout);
        Duration pause = FIRST_POLL;
        Job seen = null;
        String etag = null;
        while (true) {
            Map<String, String> headers = etag == null ? Map.of() : Map.of("If-None-Match", etag);
            Answer answer = send(new Call("GET", "/jobs/" + jobId, null, null, Safety.IDEMPOTENT, headers));
            if (answer.status() != 304) {
                Job job = read(answer, Job.class);
                etag = answer.header("ETag").orElse(null);
                if (seen == null || job.version() != seen.version()) {
                    seen = job;
                    onChange.accept(job);
                    pause = FIRST_POLL;
                } else {
                    pause = longer(pause);
                }
                if (job.state().isTerminal()) {
                    return job;
                }
            } else {
                pause = longer(pause);
            }
            if (!clock.instant().plus(pause).isBefore(deadline)) {
                throw new AwaitTimeoutException(seen);
            }
            pause(pause);
        }
    }

    /** As {@link #awaitTerminal(UUID, Duration, Consumer)}, ignoring progress. */
    public Job awaitTerminal(UUID jobId, Duration timeout) {
        return awaitTerminal(jobId, timeout, job -> {});
    }

    /**
     * Opens the job's event stream (GET /jobs/{id}/events): its events from the first, or after
     * {@code lastEventId} (a cursor this client was given; null for all), then each as it commits.
     *
     * @throws ApiProblem when the API refused the stream (404, 429 too-many-streams, ...)
     */
    public JobEventStream streamEvents(UUID jobId, String lastEventId) {
        String requestId = UUID.randomUUID().toString();
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(baseUri + "/jobs/" + jobId + "/events"))
                .header("Authorization", "Bearer " + token.get())
                .header(REQUEST_ID, requestId)
                .header("Accept", "text/event-stream")
                .GET();
        if (lastEventId != null) {
            request.header("Last-Event-ID", lastEventId);
        }
        try {
            HttpResponse<InputStream> response = http.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
            if (response.statusCode() != 200) {
                try (InputStream body = response.body()) {
                    throw problem(
                            new Answer(response.statusCode(), body.readAllBytes(), response.headers()), requestId);
                }
            }
            return new JobEventStream(response.body(), MAPPER);
        } catch (IOException e) {
            throw new ApiUnreachableException(
                    "GET /jobs/" + jobId + "/events to " + baseUri + " failed: " + e, null, requestId, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ApiUnreachableException("interrupted", null, requestId, e);
        }
    }

    /**
     * Follows the job's events until it ended and returns the job: {@code onEvent} sees every event
     * once, in order. A stream that broke or ended early (the api process stopped) is opened again
     * after the last event seen, with the retry policy's pauses between failed tries.
     *
     * @throws ApiUnreachableException when the stream could not be opened again within the policy
     */
    public Job follow(UUID jobId, Consumer<FeedEvent> onEvent) {
        AtomicReference<String> last = new AtomicReference<>();
        int failures = 0;
        while (true) {
            try (JobEventStream stream = streamEvents(jobId, last.get())) {
                failures = 0;
                stream.forEachRemaining(event -> {
                    onEvent.accept(event);
                    last.set(event.cursor());
                });
                Job job = job(jobId);
                if (job.state().isTerminal()) {
                    return job;
                }
            } catch (UncheckedIOException | ApiUnreachableException broken) {
                failures++;
                Optional<Duration> wait = retries.afterConnectionFailure(failures);
                if (wait.isEmpty()) {
                    throw new ApiUnreachableException(
                            "following job " + jobId + " failed after " + failures + " tries: " + broken,
                            null,
                            null,
                            broken);
                }
                pause(wait.get());
            }
        }
    }

    /** GET /events: the caller's events after {@code after} (null: from the first), at most {@code limit}. */
    public EventPage eventsAfter(String after, int limit) {
        StringBuilder path = new StringBuilder("/events?limit=").append(limit);
        if (after != null) {
            path.append("&after=").append(encode(after));
        }
        return read(get(path.toString()), EventPage.class);
    }

    // ------------------------------------------------------------ operators

    public DeadLetterPage deadLetters(int offset, int limit) {
        return read(get("/admin/dlq?offset=" + offset + "&limit=" + limit), DeadLetterPage.class);
    }

    /**
     * A page of dead letters matching the query's filters ({@code owner}, {@code provider},
     * {@code reason}, {@code since}, {@code until}, {@code state}) after the cursor {@code after}.
     */
    public DeadLetterPage deadLetters(Map<String, String> filter, String after, int limit) {
        StringBuilder path = new StringBuilder("/admin/dlq?limit=").append(limit);
        if (after != null) {
            path.append("&after=").append(encode(after));
        }
        filter.forEach((k, v) -> path.append('&').append(k).append('=').append(encode(v)));
        return read(get(path.toString()), DeadLetterPage.class);
    }

    /** How many dead letters match the filters. */
    public long countDeadLetters(Map<String, String> filter) {
        StringBuilder path = new StringBuilder("/admin/dlq/count?");
        filter.forEach((k, v) -> path.append(k).append('=').append(encode(v)).append('&'));
        return read(get(path.toString()), JsonNode.class).path("count").asLong();
    }

    /**
     * Replays ({@code discard} false) or discards dead letters: {@code body} names their ids and may
     * ask for a dry run. Not idempotent, so retried only before sending. By filter: {@link #bulkDryRun}.
     */
    public JsonNode actOnDeadLetters(boolean discard, JsonNode body) {
        return read(
                send(new Call(
                        "POST",
                        discard ? "/admin/dlq/discard" : "/admin/dlq/replay",
                        bytes(body),
                        null,
                        Safety.ONCE,
                        Map.of())),
                JsonNode.class);
    }

    /**
     * A bulk action's dry run (POST /admin/bulk/{action}/dry-run): the count, a sample and the token
     * its execution needs. Changes nothing, so retried like a read.
     */
    public JsonNode bulkDryRun(String action, JsonNode filter) {
        ObjectNode body = MAPPER.createObjectNode();
        body.set("filter", filter);
        return read(
                send(new Call(
                        "POST", "/admin/bulk/" + action + "/dry-run", bytes(body), null, Safety.IDEMPOTENT, Map.of())),
                JsonNode.class);
    }

    /**
     * Executes a bulk action with its dry run's filter and token (POST /admin/bulk/{action}/run); the
     * answer is its progress. Not retried after sending: a second execution is refused or acts twice.
     */
    public JsonNode bulkExecute(String action, JsonNode filter, String token, String reason) {
        ObjectNode body = MAPPER.createObjectNode();
        body.set("filter", filter);
        body.put("token", token);
        if (reason != null) {
            body.put("reason", reason);
        }
        return read(
                send(new Call("POST", "/admin/bulk/" + action + "/run", bytes(body), null, Safety.ONCE, Map.of())),
                JsonNode.class);
    }

    /** A bulk action's progress (GET /admin/bulk/{id}). */
    public JsonNode bulkAction(String id) {
        return read(get("/admin/bulk/" + encode(id)), JsonNode.class);
    }

    /** The newest bulk actions (GET /admin/bulk). */
    public JsonNode bulkActions(int limit) {
        return read(get("/admin/bulk?limit=" + limit), JsonNode.class);
    }

    private static String encode(String value) {
        return java.net.URLEncoder.encode(value, java.nio.charset.StandardCharsets.UTF_8);
    }

    /** Moves these dead letters back to the work queue. Not idempotent, so retried only before sending. */
    public ReplayResult replayDeadLetters(List<String> ids) {
        ObjectNode body = MAPPER.createObjectNode();
        ids.forEach(body.putArray("ids")::add);
        return read(
                send(new Call("POST", "/admin/dlq/replay", bytes(body), null, Safety.ONCE, Map.of())),
                ReplayResult.class);
    }

    /** Attempts held because the provider reported no usage. */
    public List<Attempt> quarantine() {
        return read(get("/admin/quarantine"), new TypeReference<>() {});
    }

    /** Releases a held attempt with the usage reconciled from the provider's own records. */
    public Attempt resolveWithUsage(UUID attemptId, int promptTokens, int completionTokens, String reason) {
        ObjectNode body = MAPPER.createObjectNode().put("reason", reason);
        body.putObject("usage").put("promptTokens", promptTokens).put("completionTokens", completionTokens);
        return resolve(attemptId, body);
    }

    /** Fails a held attempt, with the reason on record. */
    public Attempt resolveAsFailed(UUID attemptId, String reason) {
        return resolve(attemptId, MAPPER.createObjectNode().put("fail", true).put("reason", reason));
    }

    public KillSwitch fallback() {
        return read(get("/admin/fallback"), KillSwitch.class);
    }

    /** The kill switch for new fallback attempts; a reason is required to disable it. */
    public KillSwitch setFallback(boolean enabled, String reason) {
        ObjectNode body = MAPPER.createObjectNode().put("enabled", enabled);
        if (reason != null) {
            body.put("reason", reason);
        }
        return read(
                send(new Call("PUT", "/admin/fallback", bytes(body), null, Safety.IDEMPOTENT, Map.of())),
                KillSwitch.class);
    }

    public List<ProviderStatus> providers() {
        return read(get("/admin/providers"), new TypeReference<>() {});
    }

    /** Requests an acceptance run of the provider, or returns the one already waiting or going. */
    public AcceptanceRun requestAcceptance(String provider) {
        return read(
                send(new Call(
                        "POST",
                        "/admin/providers/" + segment(provider) + "/acceptance",
                        null,
                        null,
                        Safety.IDEMPOTENT,
                        Map.of())),
                AcceptanceRun.class);
    }

    /** Pauses the provider (its attempts are held until the resume); a reason is required. */
    public ProviderPauseState pauseProvider(String provider, String reason) {
        return changePause(provider, "pause", reason);
    }

    /** Resumes the provider: its held attempts are announced again. */
    public ProviderPauseState resumeProvider(String provider, String reason) {
        return changePause(provider, "resume", reason);
    }

    private ProviderPauseState changePause(String provider, String change, String reason) {
        byte[] body = bytes(MAPPER.createObjectNode().put("reason", reason));
        return read(
                send(new Call(
                        "POST",
                        "/admin/providers/" + segment(provider) + "/" + change,
                        body,
                        null,
                        Safety.IDEMPOTENT,
                        Map.of())),
                ProviderPauseState.class);
    }

    /** An owner's money budgets and where each stands (operators). */
    public OwnerBudgets budgets(String owner) {
        return read(get("/admin/budgets/" + segment(owner)), OwnerBudgets.class);
    }

    /**
     * Sets an owner's money budget for a period ({@code day} or {@code month}), of every provider
     * ({@code provider} null) or of one; audited.
     */
    public Budget setBudget(
            String owner, String period, String provider, BigDecimal limitUsd, Integer softPercent, String reason) {
        ObjectNode change = MAPPER.createObjectNode().put("limitUsd", limitUsd).put("reason", reason);
        if (softPercent != null) {
            change.put("softPercent", softPercent);
        }
        return read(
                send(new Call(
                        "PUT", budgetPath(owner, period, provider), bytes(change), null, Safety.IDEMPOTENT, Map.of())),
                Budget.class);
    }

    /**
     * Removes an owner's money budget for a period, of every provider ({@code provider} null: the
     * deployment's default, if any, applies again) or of one; audited.
     */
    public void removeBudget(String owner, String period, String provider, String reason) {
        String path = budgetPath(owner, period, provider);
        send(new Call(
                "DELETE",
                path + (provider == null ? "?" : "&") + "reason=" + encode(reason),
                null,
                null,
                Safety.IDEMPOTENT,
                Map.of()));
    }

    /** /admin/budgets/{owner}/{period}, naming the provider in the query when the budget is one provider's. */
    private static String budgetPath(String owner, String period, String provider) {
        return "/admin/budgets/" + segment(owner) + "/" + segment(period)
                + (provider == null ? "" : "?provider=" + encode(provider));
    }

    /** An owner's weight and cap on calls in flight (operators). */
    public OwnerShare ownerShare(String owner) {
        return read(get("/admin/owners/" + segment(owner) + "/share"), OwnerShare.class);
    }

    /** Sets an owner's weight (1-100) and cap on calls in flight (null: the default); audited. */
    public OwnerShare setOwnerShare(String owner, int weight, Integer maxInFlight, String reason) {
        ObjectNode change = MAPPER.createObjectNode().put("weight", weight).put("reason", reason);
        if (maxInFlight != null) {
            change.put("maxInFlight", maxInFlight);
        }
        return read(
                send(new Call(
                        "PUT",
                        "/admin/owners/" + segment(owner) + "/share",
                        bytes(change),
                        null,
                        Safety.IDEMPOTENT,
                        Map.of())),
                OwnerShare.class);
    }

    /** The price in force for each provider and model (operators). */
    public List<Price> prices() {
        return read(get("/admin/prices"), new TypeReference<>() {});
    }

    /**
     * Sets a new price version of a provider's model, from now on; audited. Not idempotent: each call
     * is a version, so it is sent once.
     */
    public Price setPrice(String provider, String model, BigDecimal inputUsd, BigDecimal outputUsd, String reason) {
        ObjectNode change = MAPPER.createObjectNode()
                .put("model", model)
                .put("inputUsdPerMillionTokens", inputUsd)
                .put("outputUsdPerMillionTokens", outputUsd)
                .put("reason", reason);
        return read(
                send(new Call("PUT", "/admin/prices/" + segment(provider), bytes(change), null, Safety.ONCE, Map.of())),
                Price.class);
    }

    /**
     * Registers a webhook endpoint for the events of your jobs of these kinds (null or empty: the
     * server's defaults, a job's ends and reviews). Sent once: a retry after a lost answer would be
     * refused as webhook-exists, and the secret is only in this answer (rotate it to get a new one).
     */
    public WebhookEndpoint registerWebhook(String url, List<String> events, String description) {
        ObjectNode body = MAPPER.createObjectNode().put("url", url);
        if (events != null && !events.isEmpty()) {
            events.forEach(body.putArray("events")::add);
        }
        if (description != null) {
            body.put("description", description);
        }
        return read(
                send(new Call("POST", "/webhooks", bytes(body), null, Safety.ONCE, Map.of())), WebhookEndpoint.class);
    }

    public List<WebhookEndpoint> webhooks() {
        return read(get("/webhooks"), new TypeReference<>() {});
    }

    public WebhookEndpoint webhook(UUID endpointId) {
        return read(get("/webhooks/" + endpointId), WebhookEndpoint.class);
    }

    /** Deletes the endpoint: nothing more is sent to it. */
    public void deleteWebhook(UUID endpointId) {
        send(new Call("DELETE", "/webhooks/" + endpointId, null, null, Safety.IDEMPOTENT, Map.of()));
    }

    /** A new signing secret; the old one signs beside it for the server's overlap. Sent once. */
    public WebhookEndpoint rotateWebhookSecret(UUID endpointId) {
        return read(
                send(new Call("POST", "/webhooks/" + endpointId + "/rotate-secret", null, null, Safety.ONCE, Map.of())),
                WebhookEndpoint.class);
    }

    /** Queues a delivery of type webhook.test to the endpoint. Sent once. */
    public WebhookDelivery testWebhook(UUID endpointId) {
        return read(
                send(new Call("POST", "/webhooks/" + endpointId + "/test", null, null, Safety.ONCE, Map.of())),
                WebhookDelivery.class);
    }

    /** The endpoint's newest deliveries, newest first; of one state (pending, delivered, failed) unless null. */
    public List<WebhookDelivery> webhookDeliveries(UUID endpointId, String state, int limit) {
        String query = "?limit=" + limit + (state == null ? "" : "&state=" + segment(state));
        JsonNode page = read(get("/webhooks/" + endpointId + "/deliveries" + query), JsonNode.class);
        return MAPPER.convertValue(page.path("deliveries"), new TypeReference<>() {});
    }

    /** Sends a failed delivery again, with the same webhook-id. */
    public WebhookDelivery retryWebhookDelivery(UUID endpointId, String webhookId) {
        return read(
                send(new Call(
                        "POST",
                        "/webhooks/" + endpointId + "/deliveries/" + segment(webhookId) + "/retry",
                        null,
                        null,
                        Safety.IDEMPOTENT,
                        Map.of())),
                WebhookDelivery.class);
    }

    public AcceptanceRun acceptanceRun(String provider, UUID runId) {
        return read(get("/admin/providers/" + segment(provider) + "/acceptance/" + runId), AcceptanceRun.class);
    }

    // ------------------------------------------------------------ transport

    /** How a request may be repeated: always (idempotent by method or by key), or only if it never left. */
    private enum Safety {
        IDEMPOTENT,
        ONCE
    }

    private record Call(
            String method,
            String path,
            byte[] body,
            String idempotencyKey,
            Safety safety,
            Map<String, String> headers) {}

    private record Answer(int status, byte[] body, HttpHeaders headers) {
        Optional<String> header(String name) {
            return headers.firstValue(name);
        }
    }

    private Attempt resolve(UUID attemptId, ObjectNode body) {
        return read(
                send(new Call(
                        "POST", "/admin/attempts/" + attemptId + "/resolve", bytes(body), null, Safety.ONCE, Map.of())),
                Attempt.class);
    }

    private Answer get(String path) {
        return send(new Call("GET", path, null, null, Safety.IDEMPOTENT, Map.of()));
    }

    /**
     * A create under an Idempotency-Key. Without a caller's key, the intention (method, URL and body)
     * names the pending key; it is settled once the API decided, and kept when no answer came.
     */
    private <T> Submitted<T> create(String path, byte[] body, String callerKey, Class<T> type) {
        String intention = callerKey == null ? intention("POST", path, body) : null;
        String key = callerKey != null ? callerKey : keys.keyFor(intention);
        Answer answer;
        try {
            answer = send(new Call("POST", path, body, key, Safety.IDEMPOTENT, Map.of()));
        } catch (ApiProblem decided) {
            if (intention != null && !RetryPolicy.isRetryable(decided.status(), decided.code())) {
                keys.settle(intention);
            }
            throw decided;
        }
        if (intention != null) {
            keys.settle(intention);
        }
        boolean replayed =
                answer.header("Idempotent-Replayed").map("true"::equals).orElse(false);
        return new Submitted<>(read(answer, type), key, replayed);
    }

    private Answer send(Call call) {
        for (int attempt = 1; ; attempt++) {
            Optional<Duration> wait;
            // Each try its own id, so the API's log lines of each can be told apart.
            String requestId = UUID.randomUUID().toString();
            try {
                HttpResponse<byte[]> response =
                        http.send(request(call, requestId), HttpResponse.BodyHandlers.ofByteArray());
                int status = response.statusCode();
                Answer answer = new Answer(status, response.body(), response.headers());
                if (status < 400) {
                    return answer;
                }
                ApiProblem problem = problem(answer, requestId);
                wait = call.safety() == Safety.IDEMPOTENT
                        ? retries.afterAnswer(
                                attempt,
                                status,
                                problem.code(),
                                answer.header("Retry-After").orElse(null),
                                clock)
                        : Optional.empty();
                if (wait.isEmpty()) {
                    if (status >= 500 || RetryPolicy.isRetryable(status, problem.code())) {
                        throw new ApiUnreachableException(
                                call.method() + " " + call.path() + ": no decision after " + attempt + " tries ("
                                        + problem.getMessage() + ")",
                                call.idempotencyKey(),
                                problem.requestId(),
                                problem);
                    }
                    throw problem;
                }
            } catch (IOException e) {
                // A refused connection never carried the request: repeating it is safe whatever it was.
                boolean mayRepeat = call.safety() == Safety.IDEMPOTENT || e instanceof ConnectException;
                wait = mayRepeat ? retries.afterConnectionFailure(attempt) : Optional.empty();
                if (wait.isEmpty()) {
                    throw new ApiUnreachableException(
                            call.method() + " " + call.path() + " to " + baseUri + " failed after " + attempt
                                    + " tries: " + e,
                            call.idempotencyKey(),
                            requestId,
                            e);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ApiUnreachableException("interrupted", call.idempotencyKey(), requestId, e);
            }
            pause(wait.get());
        }
    }

    private HttpRequest request(Call call, String requestId) {
        HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create(baseUri + call.path()))
                .timeout(requestTimeout)
                .header("Authorization", "Bearer " + token.get())
                .header(REQUEST_ID, requestId);
        if (!call.headers().containsKey("Accept")) {
            builder.header("Accept", JSON);
        }
        call.headers().forEach(builder::header);
        if (call.idempotencyKey() != null) {
            builder.header(IDEMPOTENCY_KEY, call.idempotencyKey());
        }
        if (call.body() != null) {
            builder.header("Content-Type", JSON)
                    .method(call.method(), HttpRequest.BodyPublishers.ofByteArray(call.body()));
        } else {
            builder.method(call.method(), HttpRequest.BodyPublishers.noBody());
        }
        return builder.build();
    }

    /** With the answer's X-Request-Id (the API's word), else the id the problem names, else the one sent. */
    private static ApiProblem problem(Answer answer, String sent) {
        JsonNode body = null;
        try {
            body = MAPPER.readTree(answer.body());
        } catch (IOException notJson) {
            // A proxy's HTML error page, say: the status alone has to do.
        }
        if (body == null || !body.isObject()) {
            return new ApiProblem(
                    answer.status(),
                    null,
                    "HTTP " + answer.status(),
                    null,
                    null,
                    answer.header(REQUEST_ID).orElse(sent));
        }
        String named = text(body, "requestId");
        return new ApiProblem(
                answer.status(),
                text(body, "code"),
                text(body, "title"),
                text(body, "detail"),
                body,
                answer.header(REQUEST_ID).orElse(named != null ? named : sent));
    }

    private static String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value == null || value.isNull() ? null : value.asText();
    }

    private void pause(Duration duration) {
        try {
            sleeper.sleep(duration);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ApiUnreachableException("interrupted", null, null, e);
        }
    }

    private static Duration longer(Duration pause) {
        Duration doubled = pause.multipliedBy(2);
        return doubled.compareTo(LONGEST_POLL) > 0 ? LONGEST_POLL : doubled;
    }

    private String intention(String method, String path, byte[] body) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update((method + " " + baseUri + path + "\n").getBytes(StandardCharsets.UTF_8));
            sha.update(body);
            return HexFormat.of().formatHex(sha.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    private static byte[] body(Object value) {
        return bytes(MAPPER.valueToTree(value));
    }

    private static byte[] bytes(JsonNode node) {
        try {
            return MAPPER.writeValueAsBytes(node);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static <T> T read(Answer answer, Class<T> type) {
        try {
            return MAPPER.readValue(answer.body(), type);
        } catch (IOException e) {
            throw new UncheckedIOException("the API answered " + answer.status() + " with an unreadable body", e);
        }
    }

    private static <T> T read(Answer answer, TypeReference<T> type) {
        try {
            return MAPPER.readValue(answer.body(), type);
        } catch (IOException e) {
            throw new UncheckedIOException("the API answered " + answer.status() + " with an unreadable body", e);
        }
    }

    /** Shared by the CLI to print what the API sent. */
    public static ObjectMapper json() {
        return MAPPER;
    }

    /** Builds a client; only the base URL and a token source are required. */
    public static final class Builder {

        private final URI baseUri;
        private Supplier<String> token;
        private HttpClient http;
        private RetryPolicy retries = RetryPolicy.defaults();
        private IdempotencyKeys keys = new InMemoryIdempotencyKeys();
        private Duration connectTimeout = Duration.ofSeconds(5);
        // A create answers in milliseconds; 30 s is far past that and short of a person giving up.
        private Duration requestTimeout = Duration.ofSeconds(30);
        private Sleeper sleeper = Sleeper.REAL;
        private Clock clock = Clock.systemUTC();

        private Builder(URI baseUri) {
            this.baseUri = baseUri;
        }

        /** The bearer token, asked for on every request so a refreshed one is picked up. */
        public Builder token(Supplier<String> token) {
            this.token = token;
            return this;
        }

        public Builder token(String token) {
            return token(() -> token);
        }

        public Builder retries(RetryPolicy retries) {
            this.retries = retries;
            return this;
        }

        /** Where pending keys live; {@link FileIdempotencyKeys} survives a crash of this process. */
        public Builder idempotencyKeys(IdempotencyKeys keys) {
            this.keys = keys;
            return this;
        }

        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = timeout;
            return this;
        }

        /** How long one try waits for the answer before it counts as a failed connection. */
        public Builder requestTimeout(Duration timeout) {
            this.requestTimeout = timeout;
            return this;
        }

        public Builder httpClient(HttpClient http) {
            this.http = http;
            return this;
        }

        public Builder sleeper(Sleeper sleeper) {
            this.sleeper = sleeper;
            return this;
        }

        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        public JobApiClient build() {
            if (token == null) {
                throw new IllegalStateException("a token source is required");
            }
            return new JobApiClient(this);
        }
    }
}
