package dev.jobapi.worker.provider;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jobapi.common.attempt.UsageRecord;
import dev.jobapi.worker.config.WorkerConfig;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.classic.methods.HttpUriRequestBase;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.HttpHost;
import org.apache.hc.core5.http.io.entity.ByteArrayEntity;
import org.apache.hc.core5.io.CloseMode;
import org.apache.hc.core5.util.TimeValue;
import org.apache.hc.core5.util.Timeout;
import org.jboss.logging.Logger;

/**
 * What every provider adapter shares: the retry decision table
 * (docs/design.md#retry-decision-table) over a blocking HTTP/1.1 client, and the reading of a
 * server-sent event stream against the read timeout and the attempt's deadline. The client (Apache
 * HttpClient 5's minimal classic client) tells "never sent" (connect refused or timed out, DNS, TLS
 * handshake) from "sent, answer lost" (timeout or reset afterwards), which decides between a resend
 * and an unknown attempt, and it runs the whole exchange on the delivery's own thread: the JDK's
 * client, which tells the same apart, handed every call through its selector's and its pool's
 * threads and cost the worker 0.57 to 0.81 ms of CPU a call against 0.23 to 0.29
 * (bench/ANALYSIS.md).
 *
 * <p>Every blocking step is bounded. The connect by the connect timeout; the headers by the read
 * timeout, each read and the whole wait for them (a cutoff); and a send starts only while at least
 * the read timeout is left before the deadline. Every body read (an error body, the event stream, a
 * lookup) runs under a cutoff that aborts the exchange at the read timeout or the deadline,
 * whichever comes first. So {@link #generate} returns by the deadline whatever the provider does,
 * and never sends once the lease could have run out.
 *
 * <p>An adapter says what its API's request looks like, which response header carries the
 * provider's request id, and what each stream event means.
 */
abstract class StreamingHttpProvider implements ModelProvider {

    private static final Logger LOG = Logger.getLogger(StreamingHttpProvider.class);

    /** An error body is a message for a log line; more than this is not read. */
    private static final int ERROR_BODY_CAP = 4096;

    /** One daemon thread aborts stalled exchanges for every adapter; it only ever closes sockets. */
    private static final ScheduledExecutorService WATCHDOG = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "provider-stream-watchdog");
        t.setDaemon(true);
        return t;
    });

    protected final String name;
    protected final WorkerConfig.Provider settings;
    protected final ObjectMapper mapper;
    protected final Duration readTimeout;
    private final Duration connectTimeout;
    private final HttpHost target;
    private final CloseableHttpClient http;
    protected final Clock clock;
    private final AnnouncedLimits limits;
    private final int maxSends;
    private final Duration backoff;
    protected final int maxAnswerBytes;

    StreamingHttpProvider(
            String name,
            WorkerConfig.Provider settings,
            WorkerConfig.Providers transport,
            AnnouncedLimits limits,
            ObjectMapper mapper,
            Clock clock) {
        this.name = name;
        this.limits = limits;
        this.settings = settings;
        this.mapper = mapper;
        this.clock = clock;
        this.readTimeout = settings.readTimeout().orElse(transport.readTimeout());
        this.maxSends = transport.maxSends();
        this.backoff = transport.backoff();
        this.maxAnswerBytes = transport.maxAnswerBytes();
        this.connectTimeout = settings.connectTimeout().orElse(transport.connectTimeout());
        this.target = target(name, settings.baseUrl());
        this.http = client(connectTimeout, readTimeout);
    }

    /**
     * The host every request of the provider goes to, read from its base URL once: a base URL that
     * names none stops the worker's start with the key to fix, rather than failing every attempt.
     */
    private static HttpHost target(String name, String baseUrl) {
        try {
            URI uri = new URI(baseUrl);
            if (uri.getHost() != null && ("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))) {
                return HttpHost.create(uri);
            }
        } catch (URISyntaxException e) {
            // Refused below, with the key to fix.
        }
        throw new IllegalArgumentException("jobapi.provider." + name
                + ".base-url must be an http or https URL with a host, such as https://api.openai.com; it is '"
                + baseUrl + "'");
    }

    /**
     * The client of one provider: Apache's minimal classic client, which runs a request through the
     * pool and the connection and nothing else. As the JDK's client: no automatic resend (the retry
     * decision table is ours), no redirect, no cookie, no authentication, no content decoding (the
     * answer's cap counts what the wire carries), and no bound on connections but the callers' (a
     * delivery's threads and the reconciler). The connect timeout and the read timeout (each read of
     * the socket) are the connections'. A pooled connection idle for a second is checked before it
     * carries a request: a request sent on a connection the provider is closing is, rightly, unknown,
     * so it should not be sent there.
     */
    private static CloseableHttpClient client(Duration connectTimeout, Duration readTimeout) {
        ConnectionConfig connections = ConnectionConfig.custom()
                .setConnectTimeout(Timeout.of(connectTimeout))
                .setSocketTimeout(Timeout.of(readTimeout))
                .setValidateAfterInactivity(TimeValue.ofSeconds(1))
                .build();
        return HttpClients.createMinimal(PoolingHttpClientConnectionManagerBuilder.create()
                .setDefaultConnectionConfig(connections)
                .setMaxConnTotal(Integer.MAX_VALUE)
                .setMaxConnPerRoute(Integer.MAX_VALUE)
                .build());
    }

    /** Closes the provider's pooled connections; for the worker's shutdown. */
    void close() {
        http.close(CloseMode.GRACEFUL);
    }

    /**
     * One send's streaming request for an attempt; every send of it carries the attempt's request key
     * ({@link ProviderRequest#requestKey}).
     */
    protected abstract HttpPost streamingRequest(ProviderRequest request);

    /** The response header with the provider's id for the request, if its API sends one. */
    protected abstract String requestIdHeader();

    /** Takes one event of the answer's stream into {@code answer}. */
    protected abstract void onEvent(String event, String data, StreamedAnswer answer) throws IOException;

    @Override
    public final ProviderOutcome generate(ProviderRequest request) {
        Instant deadline = request.deadline();
        String lastRefusal = null;
        // Whether a send reached the provider: from then on it may have the request.
        boolean sent = false;
        for (int send = 1; send <= maxSends; send++) {
            if (send > 1) {
                long wait = backoffMillis(send);
                if (!timeToSend(deadline, wait)) {
                    return stopped(sent, deadline, lastRefusal + "; no time left to send again before the deadline");
                }
                sleep(wait);
                if (!timeToSend(deadline, 0)) {
                    return stopped(sent, deadline, lastRefusal + "; no time left to send again before the deadline");
                }
                if (!request.guard().maySend()) {
                    LOG.debugf("Attempt %s withdrawn before send %d to %s", request.attemptId(), send, name);
                    return sent
                            ? new ProviderOutcome.Unknown(
                                    null, "sent, then the attempt was withdrawn before a resend (" + lastRefusal + ")")
                            : new ProviderOutcome.Failed(
                                    null,
                                    "not sent: the attempt was withdrawn (" + lastRefusal + ")",
                                    null,
                                    false,
                                    false);
                }
            } else if (!timeToSend(deadline, 0)) {
                return new ProviderOutcome.Failed(
                        null,
                        "not sent: less than the read timeout (" + readTimeout + ") left before the deadline",
                        null,
                        false,
                        false);
            }
            HttpPost httpRequest = streamingRequest(request);
            ClassicHttpResponse response;
            try {
                response = open(httpRequest);
            } catch (IOException e) {
                if (SendVerdict.ofSendFailure(e).sendAgain()) {
                    lastRefusal = e instanceof UnknownHostException
                            ? "not sent: cannot resolve the provider's host"
                            : "not sent: " + e;
                    LOG.debugf("Attempt %s send %d to %s %s", request.attemptId(), send, name, lastRefusal);
                    continue;
                }
                // A read timeout or a reset: the request left us; the provider may be working on it.
                String what = e instanceof SocketTimeoutException ? "no answer within the read timeout" : e.toString();
                return new ProviderOutcome.Unknown(null, "sent, then " + what);
            }
            sent = true;
            String remoteId = header(response, requestIdHeader());
            int status = response.getCode();
            if (SendVerdict.ofStatus(status, true) == SendVerdict.ANSWERING) {
                Optional<RateLimitHeaders.Announced> exhausted = RateLimitHeaders.exhausted(response, clock.instant());
                ProviderOutcome answer =
                        readStream(httpRequest, response, new StreamedAnswer(remoteId), bodyBound(deadline));
                // The last call the provider allows for now: the answer is in hand, the next calls wait.
                exhausted.ifPresent(limit -> announce(limit.delay(), limit.header()));
                return answer;
            }
            Bound bound = bodyBound(deadline);
            Optional<String> message = errorMessage(httpRequest, response, bound);
            switch (SendVerdict.ofStatus(status, message.isPresent())) {
                case SENT_UNKNOWN -> {
                    return new ProviderOutcome.Unknown(
                            remoteId,
                            "sent, then the body of its " + status + " answer stalled past " + bound.limit().words);
                }
                case DECLINED -> {
                    lastRefusal = "provider answered " + status + ": " + message.orElseThrow();
                    Optional<RateLimitHeaders.Announced> limit = RateLimitHeaders.retryAfter(response, clock.instant())
                            .or(() -> RateLimitHeaders.exhausted(response, clock.instant()));
                    if (limit.isPresent()) {
                        // Declined with a time to come back: every send so far was declined or never left
                        // us, so the provider holds nothing of this attempt; it waits, unclaimed, for
                        // the gate (rule 21) instead of spending its sends now.
                        announce(limit.get().delay(), lastRefusal);
                        return new ProviderOutcome.Held(lastRefusal + " ("
                                + limit.get().header() + " " + limit.get().delay() + ")");
                    }
                    LOG.debugf("Attempt %s send %d to %s: %s", request.attemptId(), send, name, lastRefusal);
                }
                default -> {
                    return new ProviderOutcome.Failed(
                            remoteId,
                            "provider refused with " + status + ": " + message.orElseThrow(),
                            null,
                            false,
                            false);
                }
            }
        }
        return stopped(sent, deadline, lastRefusal + " (after " + maxSends + " sends)");
    }

    /**
     * Tells every worker to hold this provider's calls for {@code wait}. Advice: should the database
     * refuse it, the call's own outcome still stands (an answer paid for is never lost to it).
     */
    private void announce(Duration wait, String reason) {
        try {
            limits.announced(name, wait, reason);
        } catch (RuntimeException notRecorded) {
            LOG.warnf(
                    "Provider %s announced a rate limit (%s, %s) that could not be recorded: %s",
                    name, wait, reason, notRecorded.toString());
        }
    }

    /** A POST of {@code body} (JSON) to {@code path} under the provider's base URL. */
    protected HttpPost post(String path, byte[] body) {
        HttpPost post = new HttpPost(settings.baseUrl() + path);
        post.setEntity(new ByteArrayEntity(body, ContentType.APPLICATION_JSON));
        return post;
    }

    /** A GET of {@code path} under the provider's base URL. */
    protected HttpGet get(String path) {
        return new HttpGet(settings.baseUrl() + path);
    }

    /**
     * Sends {@code request} and waits for its status and headers: the connect within the connect
     * timeout, then the headers within the read timeout, whatever the provider trickles (past it the
     * exchange is aborted and this throws a {@link SocketTimeoutException}). The caller reads and
     * ends the response ({@link #readBody}, or {@link #end}).
     */
    protected ClassicHttpResponse open(HttpUriRequestBase request) throws IOException {
        Cutoff cutoff = new Cutoff(request, connectTimeout.plus(readTimeout));
        ClassicHttpResponse response;
        try {
            response = http.executeOpen(target, request, null);
        } catch (IOException e) {
            if (!cutoff.cancel()) {
                throw new SocketTimeoutException("no headers within the read timeout (" + e + ")");
            }
            throw e;
        }
        if (!cutoff.cancel()) {
            end(request, response, false);
            throw new SocketTimeoutException("no headers within the read timeout");
        }
        return response;
    }

    /**
     * Ends an exchange: a body read to its end leaves its connection to the pool; any other is
     * aborted, its connection closed, so nothing of an unread body is ever read to reuse it.
     */
    protected static void end(HttpUriRequestBase request, ClassicHttpResponse response, boolean bodyReadWhole) {
        if (!bodyReadWhole) {
            request.cancel();
        }
        try {
            response.close();
        } catch (IOException e) {
            // The connection is being given up anyway.
        }
    }

    /** The response's body; an empty one when it has none. */
    private static InputStream content(ClassicHttpResponse response) throws IOException {
        HttpEntity entity = response.getEntity();
        return entity == null ? InputStream.nullInputStream() : entity.getContent();
    }

    /** The first value of the response header {@code name}, or null. */
    protected static String header(ClassicHttpResponse response, String name) {
        Header header = response.getFirstHeader(name);
        return header == null ? null : header.getValue();
    }

    /**
     * Reads a whole (non-streamed) body of at most {@code cap} bytes, giving up at {@code until}: the
     * exchange is aborted then, and its connection closed. Empty when it was cut off, too long or
     * broken. Ends the exchange.
     */
    protected Optional<byte[]> readBody(
            HttpUriRequestBase request, ClassicHttpResponse response, Instant until, int cap) {
        Cutoff cutoff = new Cutoff(request, Duration.between(clock.instant(), until));
        boolean whole = false;
        try {
            byte[] bytes = content(response).readNBytes(cap + 1);
            whole = bytes.length <= cap;
            return cutoff.cancel() && whole ? Optional.of(bytes) : Optional.empty();
        } catch (IOException e) {
            cutoff.cancel();
            whole = false;
            LOG.debugf("Body from %s unreadable: %s", name, e);
            return Optional.empty();
        } finally {
            end(request, response, whole);
        }
    }

    /**
     * A token count as the provider reported it, or null when it did not report one or reported no
     * count to believe: not a whole number, negative, or past {@link UsageRecord#MAX_TOKENS}. A null
     * count makes the usage unknown (the attempt is quarantined), never 0 and never a wrapped int.
     */
    protected Integer tokenCount(JsonNode reported, String field) {
        if (reported == null || reported.isMissingNode() || reported.isNull()) {
            return null;
        }
        if (reported.isIntegralNumber()
                && reported.canConvertToLong()
                && UsageRecord.isPlausible(reported.longValue())) {
            return reported.intValue();
        }
        LOG.warnf(
                "Provider %s reported %s = %s; not a count to believe, the usage is unknown",
                name,
                field,
                reported.toString().length() > 40 ? reported.toString().substring(0, 40) + "..." : reported);
        return null;
    }

    /** Whether a send that starts after {@code waitMillis} still has the read timeout before the deadline. */
    private boolean timeToSend(Instant deadline, long waitMillis) {
        return !clock.instant().plusMillis(waitMillis).plus(readTimeout).isAfter(deadline);
    }

    /**
     * The outcome when no further send may go: failed while the deadline is ahead (every answer was a
     * refusal, or nothing was sent); unknown once it has passed after a send, since by then the lease
     * could have run out and the attempt may be someone else's to settle.
     */
    private ProviderOutcome stopped(boolean sent, Instant deadline, String reason) {
        if (sent && clock.instant().isAfter(deadline)) {
            return new ProviderOutcome.Unknown(null, "sent, no whole answer before the deadline (" + reason + ")");
        }
        // Every send was declined or never left us: the provider's fault.
        return new ProviderOutcome.Failed(null, reason, null, false, true);
    }

    /** How long a body may take: the read timeout from now, but never past the deadline. */
    private Bound bodyBound(Instant deadline) {
        Instant byReadTimeout = clock.instant().plus(readTimeout);
        return byReadTimeout.isBefore(deadline)
                ? new Bound(byReadTimeout, Limit.READ_TIMEOUT)
                : new Bound(deadline, Limit.DEADLINE);
    }

    /**
     * Reads the event stream under a cutoff at {@code bound}: the socket's read timeout bounds each
     * read, not the whole, so the watchdog aborts a stream that has not ended by then, and the answer
     * is unknown. At most {@link #maxAnswerBytes} are read: a longer answer is failed and its exchange
     * aborted, so neither a line nor the answer grows past the cap in memory. A stream that ended
     * otherwise than whole (too large, an error event, broken) is aborted too; after a whole answer,
     * the rest of its body (the end of the stream) is read under the same cutoff and the connection
     * kept.
     */
    private ProviderOutcome readStream(
            HttpUriRequestBase request, ClassicHttpResponse response, StreamedAnswer answer, Bound bound) {
        Cutoff cutoff = new Cutoff(request, Duration.between(clock.instant(), bound.until()));
        boolean endOfStream = false;
        try {
            CappedLines reader = new CappedLines(content(response), maxAnswerBytes);
            String event = null;
            String line = null;
            while (!answer.ended() && (line = reader.next()) != null) {
                if (line.isEmpty()) {
                    event = null; // a blank line ends the event
                } else if (line.startsWith("event:")) {
                    event = line.substring(6).trim();
                } else if (line.startsWith("data:")) {
                    // Both APIs send each event's JSON on one data line, so it is handled as it arrives.
                    onEvent(event, line.substring(5).trim(), answer);
                }
            }
            endOfStream = line == null;
        } catch (AnswerTooLarge e) {
            answer.tooLarge(maxAnswerBytes);
        } catch (SocketTimeoutException e) {
            // No byte for the read timeout: the stream stalled, as the cutoff would say at its time.
            answer.cutOff(Limit.READ_TIMEOUT);
        } catch (IOException e) {
            LOG.debugf("Stream from %s broke: %s", name, e);
        } finally {
            end(request, response, endOfStream || answer.whole());
        }
        if (!cutoff.cancel()) {
            answer.cutOff(bound.limit());
        }
        return answer.outcome();
    }

    /** The provider's own message from an error body ({@code error.message} in both APIs), else the body. */
    private Optional<String> errorMessage(HttpUriRequestBase request, ClassicHttpResponse response, Bound bound) {
        return readBody(request, response, bound.until(), ERROR_BODY_CAP).map(bytes -> {
            try {
                JsonNode error = mapper.readTree(bytes).path("error").path("message");
                return error.isMissingNode() ? new String(bytes, StandardCharsets.UTF_8) : error.asText();
            } catch (IOException e) {
                return new String(bytes, StandardCharsets.UTF_8);
            }
        });
    }

    private long backoffMillis(int send) {
        long base = backoff.toMillis() << (send - 2);
        return base + ThreadLocalRandom.current().nextLong(base + 1);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** An answer went past {@link #maxAnswerBytes}. */
    private static final class AnswerTooLarge extends IOException {
        AnswerTooLarge() {
            super("answer larger than its cap");
        }
    }

    /**
     * The lines of an event stream, as UTF-8, counting every byte read: past {@code cap} bytes in all
     * it throws {@link AnswerTooLarge} instead of buffering more. A line ends at LF; a CR before it is
     * dropped (CRLF).
     */
    private static final class CappedLines {
        private final InputStream in;
        private final long cap;
        private final byte[] buffer = new byte[8192];
        private final ByteArrayOutputStream line = new ByteArrayOutputStream();
        private long read;
        private int position;
        private int end;

        CappedLines(InputStream in, long cap) {
            this.in = in;
            this.cap = cap;
        }

        /** The next line, or null at the end of the stream. */
        String next() throws IOException {
            line.reset();
            while (true) {
                if (position == end) {
                    int n = in.read(buffer);
                    if (n < 0) {
                        return line.size() > 0 ? decodeLine() : null;
                    }
                    read += n;
                    if (read > cap) {
                        throw new AnswerTooLarge();
                    }
                    position = 0;
                    end = n;
                }
                byte b = buffer[position++];
                if (b == '\n') {
                    return decodeLine();
                }
                line.write(b);
            }
        }

        private String decodeLine() {
            String text = line.toString(StandardCharsets.UTF_8);
            return text.endsWith("\r") ? text.substring(0, text.length() - 1) : text;
        }
    }

    /** The two limits a body is held to. */
    enum Limit {
        READ_TIMEOUT("the read timeout"),
        DEADLINE("the deadline");

        private final String words;

        Limit(String words) {
            this.words = words;
        }
    }

    /** When a body must have ended, and which limit that is. */
    private record Bound(Instant until, Limit limit) {}

    /**
     * Aborts an exchange that is still going after a given time; the abort closes its connection,
     * which wakes a blocked connect or read. Either the reader's {@link #cancel} or the watchdog's
     * abort wins, never both, so a reader woken by the abort always learns that it was cut off.
     */
    private static final class Cutoff {
        private final AtomicBoolean settled = new AtomicBoolean();
        private final ScheduledFuture<?> close;

        Cutoff(HttpUriRequestBase exchange, Duration after) {
            Runnable cut = () -> {
                if (settled.compareAndSet(false, true)) {
                    exchange.cancel();
                }
            };
            close = WATCHDOG.schedule(cut, Math.max(0, after.toMillis()), TimeUnit.MILLISECONDS);
        }

        /** Stops the cutoff; false when it had already closed the body or is closing it. */
        boolean cancel() {
            close.cancel(false);
            return settled.compareAndSet(false, true);
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
        private String truncation;
        private Limit cutOffBy;
        private int tooLargeAt;

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

        /** A count read by {@link #tokenCount}: null (not reported, or not believable) leaves it unknown. */
        void promptTokens(Integer reported) {
            promptTokens = reported;
        }

        void completionTokens(Integer reported) {
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

        /**
         * The provider stopped generating at its output limit ({@code how}, in its own words): the
         * answer may still end properly, but its content is cut off and must never be applied.
         */
        void truncated(String how) {
            truncation = how;
        }

        /** The answer went past {@code cap} bytes; we stopped reading it. */
        void tooLarge(int cap) {
            tooLargeAt = cap;
        }

        /** We closed the stream at {@code limit} (the read timeout or the deadline) before it ended. */
        void cutOff(Limit limit) {
            cutOffBy = limit;
        }

        boolean ended() {
            return complete || error != null || tooLargeAt > 0;
        }

        /** The provider said the answer is whole, and nothing went wrong while reading it. */
        boolean whole() {
            return complete && error == null && tooLargeAt == 0;
        }

        /**
         * A broken or failed stream is failed with its partial output discarded, and its usage recorded
         * as unknown: even counts reported before the break are partial. A truncated answer is failed
         * with the usage the provider reported for it. A stream we cut off is unknown: it was sent,
         * the provider may still finish it, and no whole answer came before our limit.
         */
        ProviderOutcome outcome() {
            if (tooLargeAt > 0) {
                return new ProviderOutcome.Failed(
                        remoteId,
                        "answer larger than " + tooLargeAt + " bytes; stream closed, output discarded",
                        null,
                        true,
                        false);
            }
            if (error != null) {
                return new ProviderOutcome.Failed(
                        remoteId,
                        "provider reported an error in the stream: " + error + "; partial output discarded",
                        null,
                        true,
                        true);
            }
            if (complete && truncation != null) {
                ProviderOutcome.Usage usage = usage();
                return new ProviderOutcome.Failed(
                        remoteId,
                        "output truncated at the provider's output limit (" + truncation + "); never applied",
                        usage,
                        usage == null,
                        false);
            }
            if (complete) {
                return ProviderOutcome.answer(remoteId, content.toString().getBytes(StandardCharsets.UTF_8), usage());
            }
            if (cutOffBy != null) {
                return new ProviderOutcome.Unknown(
                        remoteId,
                        cutOffBy == Limit.DEADLINE
                                ? "sent, no whole answer before the deadline"
                                : "sent, no whole answer within the read timeout");
            }
            if (content.length() > 0) {
                return new ProviderOutcome.Failed(
                        remoteId, "stream aborted after the first token; partial output discarded", null, true, true);
            }
            return new ProviderOutcome.Unknown(remoteId, "stream ended before any token");
        }
    }
}
