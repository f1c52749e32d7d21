package dev.jobapi.api.rest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jobapi.api.config.JobApiConfig;
import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemDetails;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.problem.Problems;
import dev.jobapi.api.security.BearerTokens;
import dev.jobapi.api.security.CachingJwtParser;
import dev.jobapi.api.security.CallbackSignatures;
import dev.jobapi.api.security.TokenRefusedException;
import dev.jobapi.api.security.TokenRules;
import io.quarkus.vertx.http.runtime.filters.Filters;
import io.smallrye.jwt.auth.principal.ParseException;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClosedException;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Guards request bodies at the HTTP layer, on the event loop, before anything waits for them. A
 * body is read here, asynchronously, before the request is routed, so no worker thread is parked
 * on a slow client (RESTEasy Reactive reads a blocking endpoint's body on its worker thread
 * otherwise); and this guard bounds what a slow or hostile client can hold on to:
 *
 * <ul>
 *   <li>a request target longer than {@code jobapi.intake.max-uri-length} is refused (414), and
 *       headers larger than {@code jobapi.intake.max-header-bytes} (431), as problems: the codec's
 *       own bounds, which answer with an empty body, are set larger;
 *   <li>a body declared larger than its limit is refused (413) unread: {@code
 *       jobapi.intake.max-body-bytes}, or a callback's own, smaller {@code
 *       jobapi.callbacks.provider.<name>.max-body-bytes};
 *   <li>a body is read only from a caller we know: the bearer token is verified here, before a
 *       byte of the body is read, by the parser and claim rules the application authenticates with
 *       ({@link CachingJwtParser}, {@link TokenRules}), and a bad one is answered 401 at once; a
 *       callback, whose HMAC needs the body, must carry a well-formed, in-window signature header
 *       for a provider with a secret, and at most {@code
 *       jobapi.callbacks.provider.<name>.max-in-flight} of one provider's bodies are read at once;
 *   <li>a body must arrive whole within {@code jobapi.intake.body-timeout}, or the request is
 *       answered 408 and its connection closed;
 *   <li>one client may have at most {@code jobapi.intake.max-uploads-per-client} requests with a
 *       body in flight; past that, 429 at once. The client is the peer address, or behind a proxy
 *       the deployment trusts ({@code jobapi.intake.trusted-proxies}) the address it forwards;
 *   <li>the bodies in flight across all clients hold at most {@code
 *       jobapi.intake.max-body-bytes-in-flight} bytes (each counts its declared length, or its limit
 *       when chunked); past that, 503 {@code server-busy} with Retry-After, at once.
 * </ul>
 */
@Singleton
public class UploadGuard {

    private static final String CALLBACKS = "/callbacks/";

    /** The routing context's key for the limit of the body being read (the 413's detail). */
    private static final String BODY_LIMIT = "jobapi.body-limit";

    /** The routing context's key for the timer of the body's deadline, cancelled once it arrived. */
    private static final String BODY_DEADLINE = "jobapi.body-deadline";

    private final JobApiConfig.Intake config;
    private final JobApiConfig.Callbacks callbacks;
    private final CallbackSignatures signatures;
    private final BearerTokens tokens;
    private final ClientAddresses clients;
    private final ObjectMapper mapper;
    private final Problems problems;
    private final Vertx vertx;
    private final Map<String, Integer> inFlight = new ConcurrentHashMap<>();
    private final Map<String, Integer> callbacksInFlight = new ConcurrentHashMap<>();
    private final AtomicLong bytesInFlight = new AtomicLong();
    private final Map<Integer, BodyHandler> bodies = new ConcurrentHashMap<>();

    UploadGuard(
            JobApiConfig config,
            CallbackSignatures signatures,
            BearerTokens tokens,
            ObjectMapper mapper,
            Problems problems,
            Vertx vertx) {
        this.config = config.intake();
        this.callbacks = config.callbacks();
        this.signatures = signatures;
        this.tokens = tokens;
        this.clients = new ClientAddresses(this.config.trustedProxies().orElse(List.of()));
        this.mapper = mapper;
        this.problems = problems;
        this.vertx = vertx;
    }

    /**
     * Reads the whole body asynchronously on the event loop; RESTEasy Reactive then takes it from
     * memory instead of reading it on the endpoint's worker thread, parked while the client sends.
     * One handler per limit (the general one and each callback provider's).
     */
    private BodyHandler bodyHandler(int limit) {
        return bodies.computeIfAbsent(limit, bytes -> BodyHandler.create(false).setBodyLimit(bytes));
    }

    // After Quarkus's own filters (the security headers), before routing and any body read; the
    // second runs when the body handler has read the whole body and passes the request on.
    void install(@Observes Filters filters) {
        filters.register(this::guard, 10);
        filters.register(this::bodyArrived, 9);
    }

    /**
     * The whole body is here: its deadline no longer applies, however long the endpoint then takes.
     * The timer used to ask the request whether it had ended, and Vert.x answered no for a body
     * long read: a POST /jobs held 4.5 s in the database was answered 408 at the 3 s deadline while
     * the endpoint went on (a job created, its client told it timed out; issue 31's load runs saw
     * it as "Response has already been written").
     */
    void bodyArrived(RoutingContext context) {
        Long deadline = context.get(BODY_DEADLINE);
        if (deadline != null) {
            vertx.cancelTimer(deadline);
        }
        context.next();
    }

    // A chunked body that grows past the limit fails the request with 413: answered as a problem.
    // Route order puts this before Quarkus's own failure handler.
    void installFailures(@Observes Router router) {
        router.route().failureHandler(context -> {
            if (context.failure() instanceof HttpClosedException) {
                // The connection closed under a body being read: the client left, or the deadline
                // above closed it after answering 408. Nobody is left to answer; not an error.
                return;
            }
            if (context.statusCode() == Problem.PAYLOAD_TOO_LARGE.status()
                    && !context.response().headWritten()) {
                Integer limit = context.get(BODY_LIMIT);
                refuse(
                        context,
                        Problem.PAYLOAD_TOO_LARGE,
                        "The body exceeds " + (limit == null ? config.maxBodyBytes() : limit) + " bytes.");
            } else {
                context.next();
            }
        });
    }

    void guard(RoutingContext context) {
        HttpServerRequest request = context.request();
        if (request.uri().length() > config.maxUriLength()) {
            refuse(
                    context,
                    Problem.URI_TOO_LONG,
                    "The request target is longer than " + config.maxUriLength() + " characters.");
            return;
        }
        if (headerBytes(request) > config.maxHeaderBytes()) {
            refuse(context, Problem.HEADERS_TOO_LARGE, "The headers exceed " + config.maxHeaderBytes() + " bytes.");
            return;
        }
        int limit = bodyLimit(request);
        try {
            // Any method: a GET declaring a huge body is refused here too, not by Vert.x without a body.
            requireDeclaredLengthWithinLimit(request, limit);
            if (carriesBody(request)) {
                requireACallerWeKnow(request);
            }
        } catch (ProblemException refused) {
            answerAndDrain(context, refused.problem(), refused.getMessage());
            return;
        }
        if (!carriesBody(request)) {
            context.next();
            return;
        }
        String client = clients.of(request);
        int max = config.maxUploadsPerClient();
        int now = inFlight.merge(client, 1, Integer::sum);
        if (max > 0 && now > max) {
            release(inFlight, client);
            refuse(
                    context,
                    Problem.TOO_MANY_UPLOADS,
                    "At most " + max + " requests with a body at once from one address; retry when one is answered.");
            return;
        }
        String provider = callbackProvider(request);
        if (provider != null) {
            int maxCallbacks = callbacks.provider().get(provider).maxInFlight();
            if (callbacksInFlight.merge(provider, 1, Integer::sum) > maxCallbacks) {
                release(callbacksInFlight, provider);
                release(inFlight, client);
                refuse(
                        context,
                        Problem.TOO_MANY_UPLOADS,
                        "At most " + maxCallbacks + " callbacks of provider '" + provider
                                + "' are read at once; retry when one is answered.");
                return;
            }
        }
        long reserved = declaredLength(request).orElse(limit);
        if (!reserve(reserved)) {
            if (provider != null) {
                release(callbacksInFlight, provider);
            }
            release(inFlight, client);
            refuse(
                    context,
                    Problem.SERVER_BUSY,
                    "The server is reading as many request bodies as it holds at once ("
                            + config.maxBodyBytesInFlight() + " bytes); retry after "
                            + Problem.RETRY_AFTER_SECONDS + " s.");
            return;
        }
        long deadline = vertx.setTimer(config.bodyTimeout().toMillis(), expired -> {
            if (context.response().headWritten()) {
                // Answered already (say, a refused request) while the client still trickles the body.
                request.connection().close();
            } else {
                refuse(
                        context,
                        Problem.REQUEST_TIMEOUT,
                        "The body did not arrive within " + config.bodyTimeout().toSeconds() + " s.");
            }
        });
        context.addEndHandler(done -> {
            vertx.cancelTimer(deadline);
            bytesInFlight.addAndGet(-reserved);
            if (provider != null) {
                release(callbacksInFlight, provider);
            }
            release(inFlight, client);
        });
        context.put(BODY_LIMIT, limit);
        context.put(BODY_DEADLINE, deadline);
        bodyHandler(limit).handle(context);
    }

    /** Takes {@code bytes} of the bytes-in-flight bound, or nothing when they do not fit. */
    private boolean reserve(long bytes) {
        long cap = config.maxBodyBytesInFlight();
        while (true) {
            long held = bytesInFlight.get();
            if (held + bytes > cap) {
                return false;
            }
            if (bytesInFlight.compareAndSet(held, held + bytes)) {
                return true;
            }
        }
    }

    /** The provider a callback is for, when it has a callback endpoint; null for every other path. */
    private String callbackProvider(HttpServerRequest request) {
        String path = request.path();
        if (path == null || !path.startsWith(CALLBACKS)) {
            return null;
        }
        String provider = path.substring(CALLBACKS.length());
        return callbacks.provider().containsKey(provider) ? provider : null;
    }

    /** The most a body of this request may hold: a callback's provider bound, else the general one. */
    private int bodyLimit(HttpServerRequest request) {
        String provider = callbackProvider(request);
        return provider == null
                ? config.maxBodyBytes()
                : Math.min(
                        config.maxBodyBytes(),
                        callbacks.provider().get(provider).maxBodyBytes());
    }

    private static java.util.OptionalLong declaredLength(HttpServerRequest request) {
        String declared = request.getHeader(HttpHeaders.CONTENT_LENGTH);
        if (declared == null) {
            return java.util.OptionalLong.empty();
        }
        try {
            return java.util.OptionalLong.of(Long.parseLong(declared.trim()));
        } catch (NumberFormatException e) {
            return java.util.OptionalLong.empty();
        }
    }

    /** A body declared too large is refused before any of it is read, with the problem a read one gets. */
    private void requireDeclaredLengthWithinLimit(HttpServerRequest request, int limit) {
        String declared = request.getHeader(HttpHeaders.CONTENT_LENGTH);
        if (declared == null) {
            return;
        }
        long length;
        try {
            length = Long.parseLong(declared.trim());
        } catch (NumberFormatException e) {
            throw new ProblemException(Problem.INVALID_REQUEST, "Content-Length is not a number.");
        }
        if (length < 0) {
            throw new ProblemException(Problem.INVALID_REQUEST, "Content-Length is negative.");
        }
        if (length > limit) {
            throw new ProblemException(Problem.PAYLOAD_TOO_LARGE, "The body exceeds " + limit + " bytes.");
        }
    }

    /**
     * The caller is known before a byte of the body is read: a callback's signature header passes
     * what can be checked without the body; any other body comes with a bearer token that the
     * application's own parser verifies (signature, issuer, audience, expiry, lifetime) and that
     * keeps the claim rules. The parser remembers the token, so the authentication after routing
     * does not verify its signature a second time.
     */
    private void requireACallerWeKnow(HttpServerRequest request) {
        String path = request.path();
        if (path.startsWith(CALLBACKS)) {
            signatures.precheck(path.substring(CALLBACKS.length()), request.getHeader(CallbackSignatures.HEADER));
            return;
        }
        Optional<String> token = BearerTokens.of(request.getHeader(HttpHeaders.AUTHORIZATION));
        if (token.isEmpty()) {
            throw new ProblemException(
                    Problem.UNAUTHENTICATED,
                    "Send Authorization: Bearer <token>; a body is read only from a caller with one.");
        }
        try {
            tokens.verify(token.get());
        } catch (TokenRefusedException refused) {
            throw new ProblemException(Problem.UNAUTHENTICATED, refused.getMessage());
        } catch (ParseException | RuntimeException notOurs) {
            throw new ProblemException(
                    Problem.UNAUTHENTICATED,
                    "Send Authorization: Bearer <token>; the token was missing, expired or not ours.");
        }
    }

    /** Header names and values as they came on the wire, each line with its ": " and CRLF. */
    private static long headerBytes(HttpServerRequest request) {
        long bytes = 0;
        for (Map.Entry<String, String> header : request.headers()) {
            bytes += header.getKey().length() + header.getValue().length() + 4;
        }
        return bytes;
    }

    private static boolean carriesBody(HttpServerRequest request) {
        HttpMethod method = request.method();
        if (method != HttpMethod.POST && method != HttpMethod.PUT && method != HttpMethod.PATCH) {
            return false;
        }
        String length = request.getHeader(HttpHeaders.CONTENT_LENGTH);
        return request.getHeader(HttpHeaders.TRANSFER_ENCODING) != null
                || (length != null && !length.trim().equals("0"));
    }

    private static void release(Map<String, Integer> counts, String key) {
        counts.computeIfPresent(key, (held, count) -> count <= 1 ? null : count - 1);
    }

    /**
     * Answers with the problem and closes the connection: the rest of the body is never read. For
     * clients past a bound (too slow, too many at once).
     */
    private void refuse(RoutingContext context, Problem problem, String detail) {
        problemResponse(context, problem)
                .putHeader(HttpHeaders.CONNECTION, "close")
                .end(problemBody(problem, detail))
                .onComplete(sent -> context.request().connection().close());
    }

    /**
     * Answers with the problem at once and drops the rest of the body as it comes, so that a client
     * still sending (a full body with an expired token, say) reads the answer instead of a reset
     * connection. Nothing is kept; the deadline closes the connection if the body never ends.
     */
    private void answerAndDrain(RoutingContext context, Problem problem, String detail) {
        HttpServerRequest request = context.request();
        long deadline = vertx.setTimer(config.bodyTimeout().toMillis(), expired -> {
            if (!request.isEnded()) {
                request.connection().close();
            }
        });
        request.handler(ignored -> {});
        request.endHandler(ended -> vertx.cancelTimer(deadline));
        request.resume();
        problemResponse(context, problem).end(problemBody(problem, detail));
    }

    private HttpServerResponse problemResponse(RoutingContext context, Problem problem) {
        var response = context.response()
                .setStatusCode(problem.status())
                .putHeader(HttpHeaders.CONTENT_TYPE, ProblemDetails.MEDIA_TYPE);
        if (problem == Problem.UNAUTHENTICATED) {
            response.putHeader("WWW-Authenticate", "Bearer");
        }
        problems.retryAfter(problem, Optional.empty())
                .ifPresent(seconds -> response.putHeader(Problems.RETRY_AFTER, seconds));
        return response;
    }

    private String problemBody(Problem problem, String detail) {
        try {
            return mapper.writeValueAsString(problems.details(problem, detail, Map.of()));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("A problem body is always serialisable", e);
        }
    }
}
