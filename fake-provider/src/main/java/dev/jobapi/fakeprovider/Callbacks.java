package dev.jobapi.fakeprovider;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Signed completion callbacks: a provider that finishes a request after the client gave up tells the job API what it
 * produced. Posted to {@code <base>/callbacks/<model>}, with the header {@code Jobapi-Signature: t=<unix
 * seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>}. A real provider posts to the callback address configured
 * for the account the request came from; the fake has no accounts, so the model the request asked for stands in for
 * it, and every local configuration names each fake provider's model after the provider (fake-a asks for the model
 * fake-a).
 */
final class Callbacks {

    static final String SIGNATURE_HEADER = "Jobapi-Signature";
    private static final Duration SEND_TIMEOUT = Duration.ofSeconds(5);

    private final Clock clock;
    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(SEND_TIMEOUT)
            .build();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "fake-provider-callbacks");
        thread.setDaemon(true);
        return thread;
    });
    private volatile Target target;

    /** Where callbacks go and the secret they are signed with. */
    private record Target(String baseUrl, String secret) {}

    Callbacks(Clock clock) {
        this.clock = clock;
    }

    void configure(String baseUrl, String secret) {
        if (baseUrl == null || baseUrl.isBlank() || secret == null || secret.isEmpty()) {
            throw new IllegalArgumentException("a callback needs both a base URL and a secret");
        }
        target = new Target(baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl, secret);
    }

    /**
     * Posts the completion {@code afterMs} after {@code receivedAt}, recording the result in the run the request
     * arrived in.
     */
    void schedule(
            ProviderState run,
            Instant receivedAt,
            long afterMs,
            String model,
            String attemptId,
            String remoteId,
            String patch,
            ReceivedRequest.Usage usage) {
        long waitMs = Math.max(0, receivedAt.plusMillis(afterMs).toEpochMilli() - clock.millis());
        timer.schedule(
                () -> run.logCallback(send(model, attemptId, remoteId, patch, usage)), waitMs, TimeUnit.MILLISECONDS);
    }

    void stop() {
        timer.shutdownNow();
    }

    private CallbackSent send(
            String model, String attemptId, String remoteId, String patch, ReceivedRequest.Usage usage) {
        String sentAt = clock.instant().toString();
        Target configured = target;
        if (configured == null) {
            return new CallbackSent(sentAt, null, attemptId, remoteId, null, "no callback base URL is configured");
        }
        String url = configured.baseUrl() + "/callbacks/" + pathSegment(model);
        byte[] body = body(attemptId, remoteId, patch, usage);
        long timestamp = clock.instant().getEpochSecond();
        HttpRequest request = HttpRequest.newBuilder(URI.create(url))
                .timeout(SEND_TIMEOUT)
                .header("Content-Type", "application/json")
                .header(SIGNATURE_HEADER, signature(configured.secret(), timestamp, body))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                .build();
        try {
            int status =
                    http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
            return new CallbackSent(sentAt, url, attemptId, remoteId, status, null);
        } catch (IOException e) {
            return new CallbackSent(sentAt, url, attemptId, remoteId, null, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new CallbackSent(sentAt, url, attemptId, remoteId, null, "interrupted: the fake provider stopped");
        }
    }

    /** The model as one path segment: percent-encoded, spaces as {@code %20} rather than a form's {@code +}. */
    private static String pathSegment(String model) {
        return URLEncoder.encode(model, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** The fixed wire format: usage is left out when the step omits it, as the answer itself leaves it out. */
    private static byte[] body(String attemptId, String remoteId, String patch, ReceivedRequest.Usage usage) {
        ObjectNode body = Exchanges.JSON.createObjectNode();
        body.put("attemptId", attemptId);
        body.put("remoteId", remoteId);
        body.put("status", "completed");
        body.put("output", patch);
        if (usage != null) {
            body.putObject("usage")
                    .put("promptTokens", usage.promptTokens())
                    .put("completionTokens", usage.completionTokens());
        }
        return body.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** {@code t=<seconds>,v1=<lowercase hex HMAC-SHA256 of "<t>." followed by the raw body bytes>}. */
    static String signature(String secret, long timestamp, byte[] body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            mac.update((timestamp + ".").getBytes(StandardCharsets.UTF_8));
            return "t=" + timestamp + ",v1=" + HexFormat.of().formatHex(mac.doFinal(body));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
        }
    }
}
