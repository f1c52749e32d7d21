package dev.jobapi.api.problem;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/** A client-facing failure with its catalogue entry and a detail for this occurrence. */
public class ProblemException extends RuntimeException {

    private final Problem problem;
    private final Map<String, Object> extensions;
    private final Instant retryAt;

    public ProblemException(Problem problem, String detail) {
        this(problem, detail, Map.of());
    }

    /** With extension members: figures the client needs to act on the problem. */
    public ProblemException(Problem problem, String detail, Map<String, Object> extensions) {
        this(problem, detail, extensions, null);
    }

    /** With the moment the same request may succeed (a budget's next day), answered as Retry-After. */
    public ProblemException(Problem problem, String detail, Map<String, Object> extensions, Instant retryAt) {
        super(detail);
        this.problem = problem;
        this.extensions = extensions;
        this.retryAt = retryAt;
    }

    public Problem problem() {
        return problem;
    }

    public Map<String, Object> extensions() {
        return extensions;
    }

    /** When the same request may succeed; empty when the catalogue's fixed delay applies. */
    public Optional<Instant> retryAt() {
        return Optional.ofNullable(retryAt);
    }
}
