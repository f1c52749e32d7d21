package dev.jobapi.api.problem;

import dev.jobapi.api.config.JobApiConfig;
import dev.jobapi.common.tracing.RequestIds;
import jakarta.inject.Singleton;
import jakarta.ws.rs.core.Response;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/**
 * Makes the problem+json answers of the catalogue, with absolute type URIs under the public base, the
 * request's id, whether the same request may be retried, and on every 429 and 503 a Retry-After.
 */
@Singleton
public class Problems {

    public static final String RETRY_AFTER = "Retry-After";

    private final String base;
    private final Clock clock;

    Problems(JobApiConfig config, Clock clock) {
        String configured = config.publicBaseUri().toString();
        this.base = configured.endsWith("/") ? configured.substring(0, configured.length() - 1) : configured;
        this.clock = clock;
    }

    /** The problem type: an absolute URI whose page ({@link Problem#path()}) describes it. */
    public String type(Problem problem) {
        return base + problem.path();
    }

    public ProblemDetails details(Problem problem, String detail, Map<String, Object> extensions) {
        return new ProblemDetails(
                type(problem),
                problem.title(),
                problem.status(),
                detail,
                problem.code(),
                RequestIds.current().orElse(null),
                problem.retryable(),
                extensions);
    }

    public Response response(Problem problem, String detail) {
        return response(problem, detail, Map.of());
    }

    public Response response(Problem problem, String detail, Map<String, Object> extensions) {
        return response(problem, detail, extensions, Optional.empty());
    }

    public Response response(ProblemException e) {
        return response(e.problem(), e.getMessage(), e.extensions(), e.retryAt());
    }

    private Response response(
            Problem problem, String detail, Map<String, Object> extensions, Optional<Instant> retryAt) {
        Response.ResponseBuilder answer = Response.status(problem.status())
                .type(ProblemDetails.MEDIA_TYPE)
                .entity(details(problem, detail, extensions));
        retryAfter(problem, retryAt).ifPresent(seconds -> answer.header(RETRY_AFTER, seconds));
        return answer.build();
    }

    /**
     * The Retry-After of a 429 or 503, in seconds: until {@code retryAt} when the problem knows when
     * (a budget's next UTC day), otherwise the catalogue's short delay; none for any other status.
     */
    public Optional<String> retryAfter(Problem problem, Optional<Instant> retryAt) {
        if (problem.status() != 429 && problem.status() != 503) {
            return Optional.empty();
        }
        long seconds = retryAt.map(at -> Duration.between(clock.instant(), at))
                .map(wait -> Math.max(1, wait.toSeconds() + (wait.toNanosPart() > 0 ? 1 : 0)))
                .orElse((long) Problem.RETRY_AFTER_SECONDS);
        return Optional.of(Long.toString(seconds));
    }
}
