package dev.jobapi.api.rest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jobapi.api.config.JobApiConfig;
import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemDetails;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.problem.Problems;
import dev.jobapi.api.security.CallbackSignatures;
import io.quarkus.vertx.http.runtime.filters.Filters;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClosedException;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

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
 *   <li>a body declared larger than {@code jobapi.intake.max-body-bytes} is refused (413) unread;
 *   <li>a body from nobody who could be authenticated is refused before it is read: a bearer token
 *       must be present (it is verified before the body is read), and a callback's signature header
 *       must be well formed, for a provider with a secret, and inside its window;
 *   <li>a body must arrive whole within {@code jobapi.intake.body-timeout}, or the request is
 *       answered 408 and its connection closed;
 *   <li>one peer address may have at most {@code jobapi.intake.max-uploads-per-client} requests with
 *       a body in flight; past that, 429 at once.
 * </ul>
 */
@ApplicationScoped
public class UploadGuard {

    private static final String CALLBACKS = "/callbacks/";

    private final JobApiConfig.Intake config;
    private final CallbackSignatures signatures;
    private final ObjectMapper mapper;
    private final Problems problems;
    private final Vertx vertx;
    private final Map<String, Integer> inFlight = new ConcurrentHashMap<>();
    private final BodyHandler bodies;

    UploadGuard(
            JobApiConfig config, CallbackSignatures signatures, ObjectMapper mapper, Problems problems, Vertx vertx) {
        this.config = config.intake();
        this.signatures = signatures;
        this.mapper = mapper;
        this.problems = problems;
        this.vertx = vertx;
        // Reads the whole body asynchronously on the event loop; RESTEasy Reactive then takes it from
        // memory instead of reading it on the endpoint's worker thread, parked while the client sends.
        this.bodies = BodyHandler.create(false).setBodyLimit(this.config.maxBodyBytes());
    }

    // After Quarkus's own filters (the security headers), before routing and any body read.
    void install(@Observes Filters filters) {
        filters.register(this::guard, 10);
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
                refuse(context, Problem.PAYLOAD_TOO_LARGE, "The body exceeds " + config.maxBodyBytes() + " bytes.");
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
        try {
            // Any method: a GET declaring a huge body is refused here too, not by Vert.x without a body.
            requireDeclaredLengthWithinLimit(request);
            if (carriesBody(request)) {
                requireSomeoneToAuthenticate(request);
            }
        } catch (ProblemException refused) {
            answerAndDrain(context, refused.problem(), refused.getMessage());
            return;
        }
        if (!carriesBody(request)) {
            context.next();
            return;
        }
        String client = request.remoteAddress() == null
                ? "unknown"
                : request.remoteAddress().hostAddress();
        int max = config.maxUploadsPerClient();
        int now = inFlight.merge(client, 1, Integer::sum);
        if (max > 0 && now > max) {
            release(client);
            refuse(
                    context,
                    Problem.TOO_MANY_UPLOADS,
                    "At most " + max + " requests with a body at once from one address; retry when one is answered.");
            return;
        }
        long deadline = vertx.setTimer(config.bodyTimeout().toMillis(), expired -> {
            if (request.isEnded()) {
                return;
            }
            if (context.response().headWritten()) {
                // Answered already (say, a refused token) while the client still trickles the body.
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
            release(client);
        });
        bodies.handle(context);
    }

    /** A body declared too large is refused before any of it is read, with the problem a read one gets. */
    private void requireDeclaredLengthWithinLimit(HttpServerRequest request) {
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
        if (length > config.maxBodyBytes()) {
            throw new ProblemException(
                    Problem.PAYLOAD_TOO_LARGE, "The body exceeds " + config.maxBodyBytes() + " bytes.");
        }
    }

    private void requireSomeoneToAuthenticate(HttpServerRequest request) {
        String path = request.path();
        if (path.startsWith(CALLBACKS)) {
            signatures.precheck(path.substring(CALLBACKS.length()), request.getHeader(CallbackSignatures.HEADER));
            return;
        }
        String authorization = request.getHeader(HttpHeaders.AUTHORIZATION);
        if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            throw new ProblemException(
                    Problem.UNAUTHENTICATED,
                    "Send Authorization: Bearer <token>; a body is read only from a caller with one.");
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

    private void release(String client) {
        inFlight.computeIfPresent(client, (address, count) -> count <= 1 ? null : count - 1);
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

    private static HttpServerResponse problemResponse(RoutingContext context, Problem problem) {
        var response = context.response()
                .setStatusCode(problem.status())
                .putHeader(HttpHeaders.CONTENT_TYPE, ProblemDetails.MEDIA_TYPE);
        if (problem == Problem.UNAUTHENTICATED) {
            response.putHeader("WWW-Authenticate", "Bearer");
        }
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
