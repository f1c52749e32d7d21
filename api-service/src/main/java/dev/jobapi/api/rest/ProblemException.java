package dev.jobapi.api.rest;

/** A client-facing failure with its catalogue entry and a detail for this occurrence. */
public class ProblemException extends RuntimeException {

    private final Problem problem;

    public ProblemException(Problem problem, String detail) {
        super(detail);
        this.problem = problem;
    }

    public Problem problem() {
        return problem;
    }
}
