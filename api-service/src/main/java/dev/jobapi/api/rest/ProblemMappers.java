package dev.jobapi.api.rest;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.problem.Problems;
import dev.jobapi.api.security.TokenRefusedException;
import dev.jobapi.api.service.ApiMetrics;
import dev.jobapi.common.database.DatabaseAway;
import dev.jobapi.common.database.WriteConflict;
import io.quarkus.security.AuthenticationFailedException;
import io.quarkus.security.ForbiddenException;
import io.quarkus.security.UnauthorizedException;
import jakarta.ws.rs.NotAcceptableException;
import jakarta.ws.rs.NotAllowedException;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.NotSupportedException;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;
import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/** Turns every failure into problem+json: never a stack trace, never a 500 for a client's mistake. */
public class ProblemMappers {

    private static final Logger LOG = Logger.getLogger(ProblemMappers.class);

    private final ApiMetrics metrics;
    private final Problems problems;

    ProblemMappers(ApiMetrics metrics, Problems problems) {
        this.metrics = metrics;
        this.problems = problems;
    }

    @ServerExceptionMapper
    public Response problem(ProblemException e) {
        switch (e.problem()) {
            case IDEMPOTENCY_KEY_REUSED -> metrics.keyConflict();
            case REVIEW_REQUIRED -> metrics.reviewRequiredRefusal();
            case SERVER_BUSY -> metrics.requestShed();
            default -> {}
        }
        return problems.response(e);
    }

    @ServerExceptionMapper
    public Response notFound(NotFoundException e) {
        return problems.response(Problem.NOT_FOUND, "Nothing is served at this path.");
    }

    @ServerExceptionMapper
    public Response notAllowed(NotAllowedException e) {
        Response problem = problems.response(Problem.METHOD_NOT_ALLOWED, "See the Allow header.");
        return Response.fromResponse(problem)
                .header(HttpHeaders.ALLOW, e.getResponse().getHeaderString(HttpHeaders.ALLOW))
                .build();
    }

    @ServerExceptionMapper
    public Response unsupported(NotSupportedException e) {
        return problems.response(
                Problem.UNSUPPORTED_MEDIA_TYPE, "Send Content-Type: application/json with a JSON body.");
    }

    @ServerExceptionMapper
    public Response notAcceptable(NotAcceptableException e) {
        return problems.response(Problem.NOT_ACCEPTABLE, "Accept application/json or */*.");
    }

    @ServerExceptionMapper({UnauthorizedException.class, AuthenticationFailedException.class})
    public Response unauthenticated(RuntimeException e) {
        // A token that verified but broke one of our rules says which; any other failure says nothing
        // a forger could learn from.
        String detail = refusal(e) instanceof TokenRefusedException refused
                ? refused.getMessage()
                : "Send Authorization: Bearer <token>; the token was missing, expired or not ours.";
        return Response.fromResponse(problems.response(Problem.UNAUTHENTICATED, detail))
                .header(HttpHeaders.WWW_AUTHENTICATE, "Bearer")
                .build();
    }

    private static Throwable refusal(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof TokenRefusedException) {
                return t;
            }
        }
        return e;
    }

    @ServerExceptionMapper
    public Response forbidden(ForbiddenException e) {
        return problems.response(Problem.FORBIDDEN, "Your token's groups do not include a role allowed here.");
    }

    @ServerExceptionMapper
    public Response webApplication(WebApplicationException e) {
        int status = e.getResponse().getStatus();
        if (status >= 500) {
            return unexpected(e);
        }
        Problem problem = status == 413 ? Problem.PAYLOAD_TOO_LARGE : Problem.INVALID_REQUEST;
        return problems.response(problem, "The request could not be read.");
    }

    @ServerExceptionMapper
    public Response unexpected(Throwable e) {
        if (DatabaseAway.isCause(e) || WriteConflict.isCause(e)) {
            // No connection within the acquisition timeout (every one taken), the database away (a
            // failover, a restart), or a concurrent transaction that won past every rerun: not a
            // fault of the request. Shed it with a 503 the client may retry with the same
            // Idempotency-Key, and count it for the operators.
            metrics.requestShed();
            LOG.warnf(
                    "The database was busy or away, or a concurrent change won; answered 503 server-busy: %s",
                    e.toString());
            return problems.response(
                    Problem.SERVER_BUSY,
                    "The database is busy or failing over; retry after " + Problem.RETRY_AFTER_SECONDS
                            + " s with the same Idempotency-Key.");
        }
        LOG.error("Unexpected failure while serving a request", e);
        return problems.response(
                Problem.INTERNAL, "The failure was logged; retrying with the same Idempotency-Key is safe.");
    }
}
