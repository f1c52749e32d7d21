package dev.jobapi.worker.provider;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.jobapi.worker.config.WorkerConfig;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLHandshakeException;
import org.jboss.logging.Logger;

/**
 * The OpenAI chat-completions adapter (also spoken by the fake provider), over the JDK HttpClient
 * because it lets us tell "never sent" (connect refused, DNS, TLS handshake) from "sent, answer
 * lost" (timeout or reset afterwards), which decides between a resend and an unknown attempt.
 * Streams with usage in the final chunk; our attempt id goes in {@code metadata}, our request key
 * in the {@code Idempotency-Key} header.
 */
@ApplicationScoped
public class OpenAiCompatibleProvider implements ModelProvider {

    private static final Logger LOG = Logger.getLogger(OpenAiCompatibleProvider.class);

    private final WorkerConfig.Providers config;
    private final ObjectMapper mapper;
    private final HttpClient http;
    private final ScheduledExecutorService watchdog = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "provider-stream-watchdog");
        t.setDaemon(true);
        return t;
    });

    OpenAiCompatibleProvider(WorkerConfig config, ObjectMapper mapper) {
        this.config = config.providers();
        this.mapper = mapper;
        this.http = HttpClient.newBuilder()
                .connectTimeout(this.config.connectTimeout())
                .version(HttpClient.Version.HTTP_1_1)
                .build();
    }

    @Override
    public ProviderOutcome generate(ProviderRequest request) {
        HttpRequest httpRequest = httpRequest(request);
        String lastRefusal = null;
        for (int send = 1; send <= config.maxSends(); send++) {
            if (send > 1) {
                backoff(send);
            }
            HttpResponse<InputStream> response;
            try {
                response = http.send(httpRequest, HttpResponse.BodyHandlers.ofInputStream());
            } catch (ConnectException | HttpConnectTimeoutException | SSLHandshakeException e) {
                lastRefusal = "not sent: " + e;
                LOG.debugf("Attempt %s send %d not sent: %s", request.attemptId(), send, e);
                continue;
            } catch (IOException e) {
                if (e.getCause() instanceof UnresolvedAddressException) {
                    lastRefusal = "not sent: cannot resolve the provider's host";
                    continue;
                }
                // HttpTimeoutException and resets: the request left us; the provider may be working on it.
                String what = e instanceof HttpTimeoutException ? "no answer within the read timeout" : e.toString();
                return new ProviderOutcome.Unknown(null, "sent, then " + what);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return new ProviderOutcome.Unknown(null, "interrupted after sending");
            }
            String remoteId = response.headers().firstValue("x-request-id").orElse(null);
            int status = response.statusCode();
            if (status == 429 || status >= 500) {
                lastRefusal = "provider answered " + status + ": " + errorMessage(response);
                LOG.debugf("Attempt %s send %d: %s", request.attemptId(), send, lastRefusal);
                continue;
            }
            if (status != 200) {
                return new ProviderOutcome.Failed(
                        remoteId, "provider refused with " + status + ": " + errorMessage(response), false);
            }
            return readStream(response, remoteId);
        }
        return new ProviderOutcome.Failed(null, lastRefusal + " (after " + config.maxSends() + " sends)", false);
    }

    /**
     * Stored chat completions: {@code GET /v1/chat/completions/{id}} when we learned the id, else the
     * list filtered by our attempt id in {@code metadata}. Requests are sent with {@code store: true}.
     */
    @Override
    public Optional<ProviderOutcome.Completed> lookup(UUID attemptId, String remoteId) {
        String path = remoteId != null
                ? "/v1/chat/completions/" + URLEncoder.encode(remoteId, StandardCharsets.UTF_8)
                : "/v1/chat/completions?metadata%5Battempt_id%5D=" + attemptId;
        HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create(config.baseUrl() + path))
                .timeout(config.readTimeout())
                .GET();
        config.apiKey().ifPresent(key -> builder.header("Authorization", "Bearer " + key));
        try {
            HttpResponse<byte[]> response = http.send(builder.build(), HttpResponse.BodyHandlers.ofByteArray());
            if (response.statusCode() != 200) {
                return Optional.empty();
            }
            JsonNode body = mapper.readTree(response.body());
            JsonNode completion = body.has("data") ? body.path("data").path(0) : body;
            if (completion.isMissingNode() || !completion.hasNonNull("id")) {
                return Optional.empty();
            }
            String content = completion
                    .path("choices")
                    .path(0)
                    .path("message")
                    .path("content")
                    .asText("");
            JsonNode reported = completion.get("usage");
            ProviderOutcome.Usage usage = reported != null && reported.isObject()
                    ? new ProviderOutcome.Usage(
                            reported.path("prompt_tokens").asInt(),
                            reported.path("completion_tokens").asInt())
                    : null;
            return Optional.of(new ProviderOutcome.Completed(
                    completion.get("id").asText(), content.getBytes(StandardCharsets.UTF_8), usage));
        } catch (IOException e) {
            LOG.debugf("Lookup of attempt %s failed: %s", attemptId, e);
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    private HttpRequest httpRequest(ProviderRequest request) {
        ObjectNode body = mapper.createObjectNode();
        body.put("model", request.model());
        body.put("stream", true);
        body.putObject("stream_options").put("include_usage", true);
        body.put("store", true);
        body.putObject("metadata").put("attempt_id", request.attemptId().toString());
        body.putArray("messages").addObject().put("role", "user").put("content", request.prompt());
        HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create(config.baseUrl() + "/v1/chat/completions"))
                .timeout(config.readTimeout())
                .header("Content-Type", "application/json")
                .header("Accept", "text/event-stream")
                .header("Idempotency-Key", request.requestKey())
                .POST(HttpRequest.BodyPublishers.ofString(body.toString()));
        config.apiKey().ifPresent(key -> builder.header("Authorization", "Bearer " + key));
        return builder.build();
    }

    /**
     * Reads the event stream. The JDK timeout covers only the headers, so a watchdog closes a stream
     * that stalls past the read timeout; whether a token had arrived decides failed or unknown.
     */
    private ProviderOutcome readStream(HttpResponse<InputStream> response, String headerRemoteId) {
        StringBuilder content = new StringBuilder();
        String remoteId = headerRemoteId;
        ProviderOutcome.Usage usage = null;
        boolean done = false;
        InputStream stream = response.body();
        ScheduledFuture<?> stall = watchdog.schedule(
                () -> closeQuietly(stream), config.readTimeout().toMillis(), TimeUnit.MILLISECONDS);
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                if (!line.startsWith("data:")) {
                    continue;
                }
                String data = line.substring(5).trim();
                if (data.equals("[DONE]")) {
                    done = true;
                    break;
                }
                JsonNode chunk = mapper.readTree(data);
                if (remoteId == null && chunk.hasNonNull("id")) {
                    remoteId = chunk.get("id").asText();
                }
                for (JsonNode choice : chunk.path("choices")) {
                    content.append(choice.path("delta").path("content").asText(""));
                }
                JsonNode reported = chunk.get("usage");
                if (reported != null && reported.isObject()) {
                    usage = new ProviderOutcome.Usage(
                            reported.path("prompt_tokens").asInt(),
                            reported.path("completion_tokens").asInt());
                }
            }
        } catch (IOException e) {
            LOG.debugf("Stream broke: %s", e);
        } finally {
            stall.cancel(false);
        }
        if (done) {
            return new ProviderOutcome.Completed(remoteId, content.toString().getBytes(StandardCharsets.UTF_8), usage);
        }
        if (content.length() > 0) {
            return new ProviderOutcome.Failed(
                    remoteId, "stream aborted after the first token; partial output discarded", true);
        }
        return new ProviderOutcome.Unknown(remoteId, "stream ended before any token");
    }

    private String errorMessage(HttpResponse<InputStream> response) {
        try (InputStream body = response.body()) {
            byte[] bytes = body.readNBytes(4096);
            JsonNode error = mapper.readTree(bytes).path("error").path("message");
            return error.isMissingNode() ? new String(bytes, StandardCharsets.UTF_8) : error.asText();
        } catch (IOException e) {
            return "(no readable error body)";
        }
    }

    private void backoff(int send) {
        long base = config.backoff().toMillis() << (send - 2);
        long jittered = base + ThreadLocalRandom.current().nextLong(base + 1);
        try {
            Thread.sleep(jittered);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void closeQuietly(InputStream stream) {
        try {
            stream.close();
        } catch (IOException e) {
            // The stream is being abandoned anyway.
        }
    }
}
