package dev.jobapi.api.rest;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;

/**
 * The free-text reasons people give (supersede, kill switch, resolve): they go into the audit trail,
 * the timeline and log lines, so they are bounded and hold no control characters other than tab and
 * line breaks (NUL cannot be stored in PostgreSQL text at all).
 */
final class Reasons {

    private Reasons() {}

    /** The reason, or a 400 saying which rule it breaks; {@code field} names it in the message. */
    static String require(String field, String reason, int maxLength) {
        if (reason == null || reason.isBlank()) {
            throw new ProblemException(Problem.INVALID_REQUEST, "'" + field + "' must say why.");
        }
        if (reason.length() > maxLength) {
            throw new ProblemException(
                    Problem.INVALID_REQUEST, "'" + field + "' must be at most " + maxLength + " characters.");
        }
        boolean control =
                reason.chars().anyMatch(c -> Character.isISOControl(c) && c != '\t' && c != '\n' && c != '\r');
        if (control) {
            throw new ProblemException(
                    Problem.INVALID_REQUEST,
                    "'" + field + "' must not contain control characters other than tab and newline.");
        }
        return reason;
    }
}
