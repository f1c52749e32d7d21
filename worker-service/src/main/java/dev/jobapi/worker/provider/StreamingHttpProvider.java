package dev.jobapi.worker.provider;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jobapi.worker.config.WorkerConfig;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLHandshakeException;
import org.jboss.logging.Logger;

/**
 * What every provider adapter shares: DESIGN.md's retry decision table over the JDK HttpClient, and
 * the reading of a server-sent event stream against the read timeout. The JDK client is used
 * because it tells "never sent" (connect refused, DNS, TLS handshake) from "sent, answer lost"
 * (timeout or reset afterwards), which decides between a resend and an unknown attempt.
 *
 * <p>An adapter says what its API's request looks like, which response header carries the
 * provider's request id, and what each stream event means.
 */
abstract class StreamingHttpProvider implements ModelProvider {

    private static final Logger LOG = Logger.getLogger(StreamingHttpProvider.class);

    /** One daemon thread closes stalled streams for every adapter; it only ever closes sockets. */
    private static final ScheduledExecutorService WATCHDOG = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "provider-stream-watchdog");
        t.setDaemon(true);
        return t;
    });

    protected final String name;
    protected final WorkerConfig.Provider settings;
    protected final ObjectMapper mapper;
    protected final Duration readTimeout;
    protected final HttpClient http;
    private final int maxSends;
    private final Duration backoff;

    StreamingHttpProvider(
            String name, WorkerConfig.Provider settings, WorkerConfig.Providers transport, ObjectMapper mapper) {
        this.name = name;
        this.settings = settings;
        this.mapper = mapper;
        this.readTimeout = settings.readTimeout().orElse(transport.readTimeout());
        this.maxSends = transport.maxSends();
        this.backoff = transport.backoff();
        this.http = HttpClient.newBuilder()
                .connectTimeout(settings.connectTimeout().orElse(transport.connectTimeout()))
                .version(HttpClient.Version.HTTP_1_1)
                .build();
    }

    /** The streaming request for one attempt; built once, so every send carries the same key. */
    protected abstract HttpRequest streamingRequest(ProviderRequest request);

    /** The response header with the provider's id for the request, if its API sends one. */
    protected abstract String requestIdHeader();

    /** Takes one event of the answer's stream into {@code answer}. */
    protected abstract void onEvent(String event, String data, StreamedAnswer answer) throws IOException;

    @Override
    public final ProviderOutcome generate(ProviderRequest request) {
        HttpRequest httpRequest = streamingRequest(request);
        String lastRefusal = null;
        for (int send = 1; send <= maxSends; send++) {
            if (send > 1) {
                backoff(send);
            }
            HttpResponse<InputStream> response;
            try {
                response = http.send(httpRequest, HttpResponse.BodyHandlers.ofInputStream());
            } catch (ConnectException | HttpConnectTimeoutException | SSLHandshakeException e) {
                lastRefusal = "not sent: " + e;
                LOG.debugf("Attempt %s send %d to %s not sent: %s", request.attemptId(), send, name, e);
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
            String remoteId = response.headers().firstValue(requestIdHeader()).orElse(null);
            int status = response.statusCode();
            // 429 and every 5xx (Anthropic's 529 "overloaded" too) say the request was not taken.
            if (status == 429 || status >= 500) {
                lastRefusal = "provider answered " + status + ": " + errorMessage(response);
                LOG.debugf("Attempt %s send %d to %s: %s", request.attemptId(), send, name, lastRefusal);
                continue;
            }
            if (status != 200) {
                return new ProviderOutcome.Failed(
                        remoteId, "provider refused with " + status + ": " + errorMessage(response), false);
            }
            return readStream(response.body(), new StreamedAnswer(remoteId));
        }
        return new ProviderOutcome.Failed(null, lastRefusal + " (after " + maxSends + " sends)", false);
    }

    /** A request to {@code path} under the provider's base URL with the read timeout set. */
    protected HttpRequest.Builder newRequest(String path) {
        return HttpRequest.newBuilder(URI.create(settings.baseUrl() + path)).timeout(readTimeout);
    }

    /**
     * Reads the event stream. The JDK timeout covers only the headers, so a watchdog closes a stream
     * that stalls past the read timeout; whether a token had arrived decides failed or unknown.
     */
    private ProviderOutcome readStream(InputStream stream, StreamedAnswer answer) {
        ScheduledFuture<?> stall =
                WATCHDOG.schedule(() -> closeQuietly(stream), readTimeout.toMillis(), TimeUnit.MILLISECONDS);
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
            String event = null;
            String line;
            while (!answer.ended() && (line = reader.readLine()) != null) {
                if (line.isEmpty()) {
                    event = null; // a blank line ends the event
                } else if (line.startsWith("event:")) {
                    event = line.substring(6).trim();
                } else if (line.startsWith("data:")) {
                    // Both APIs send each event's JSON on one data line, so it is handled as it arrives.
                    onEvent(event, line.substring(5).trim(), answer);
                }
            }
        } catch (IOException e) {
            LOG.debugf("Stream from %s broke: %s", name, e);
        } finally {
            stall.cancel(false);
        }
        return answer.outcome();
    }

    /** The provider's own message from an error body ({@code error.message} in both APIs), else the body. */
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
        long base = backoff.toMillis() << (send - 2);
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

    /** What one answer's stream has said so far, and what it comes to when it ends. */
    static final class StreamedAnswer {
        private final StringBuilder content = new StringBuilder();
        private String remoteId;
        private Integer promptTokens;
        private Integer completionTokens;
        private boolean complete;
        private String error;

        StreamedAnswer(String remoteId) {
            this.remoteId = remoteId;
        }

        void append(String text) {
            content.append(text);
        }

        /** The provider's id for the answer; a later, better id (the message's own) replaces it. */
        void remoteId(String id) {
            remoteId = id;
        }

        String remoteId() {
            return remoteId;
        }

        void promptTokens(int reported) {
            promptTokens = reported;
        }

        void completionTokens(int reported) {
            completionTokens = reported;
        }

        /** Null unless both counts were reported: half a usage is no usage (the pipeline fails closed). */
        private ProviderOutcome.Usage usage() {
            return promptTokens != null && completionTokens != null
                    ? new ProviderOutcome.Usage(promptTokens, completionTokens)
                    : null;
        }

        /** The provider said the answer is whole. */
        void complete() {
            complete = true;
        }

        /** The provider reported an error inside the stream. */
        void error(String message) {
            error = message;
        }

        boolean ended() {
            return complete || error != null;
        }

        /**
         * A broken or failed stream is failed with its partial output discarded, and its usage recorded
         * as unknown: tokens were spent and {@link ProviderOutcome.Failed} carries no counts.
         */
        ProviderOutcome outcome() {
            if (error != null) {
                return new ProviderOutcome.Failed(
                        remoteId,
                        "provider reported an error in the stream: " + error + "; partial output discarded",
                        true);
            }
            if (complete) {
                return new ProviderOutcome.Completed(
                        remoteId, content.toString().getBytes(StandardCharsets.UTF_8), usage());
            }
            if (content.length() > 0) {
                return new ProviderOutcome.Failed(
                        remoteId, "stream aborted after the first token; partial output discarded", true);
            }
            return new ProviderOutcome.Unknown(remoteId, "stream ended before any token");
        }
    }
}
