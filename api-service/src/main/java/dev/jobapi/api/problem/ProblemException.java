package dev.jobapi.api.problem;

import java.util.Map;

/** A client-facing failure with its catalogue entry and a detail for this occurrence. */
public class ProblemException extends RuntimeException {

    private final Problem problem;
    private final Map<String, Object> extensions;

    public ProblemException(Problem problem, String detail) {
        this(problem, detail, Map.of());
    }

    /** With extension members: figures the client needs to act on the problem. */
    public ProblemException(Problem problem, String detail, Map<String, Object> extensions) {
        super(detail);
        this.problem = problem;
        this.extensions = extensions;
    }

    public Problem problem() {
        return problem;
    }

    public Map<String, Object> extensions() {
        return extensions;
    }
}
