package dev.jobapi.api.rest;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;

/** Validates the Idempotency-Key header: required, 1-255 printable ASCII characters. */
final class IdempotencyKeys {

    static final int MAX_LENGTH = 255;

    private IdempotencyKeys() {}

    static String require(String header) {
        if (header == null || header.isEmpty()) {
            throw new ProblemException(
                    Problem.IDEMPOTENCY_KEY_MISSING,
                    "Send an Idempotency-Key header, e.g. a UUID made when the user clicked.");
        }
        if (header.length() > MAX_LENGTH || header.isBlank() || !header.chars().allMatch(c -> c >= 0x20 && c <= 0x7e)) {
            throw new ProblemException(
                    Problem.IDEMPOTENCY_KEY_INVALID, "The key must be 1-255 printable ASCII characters.");
        }
        return header;
    }
}
