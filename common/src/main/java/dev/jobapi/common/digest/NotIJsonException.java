package dev.jobapi.common.digest;

/**
 * A JSON value that is not I-JSON (RFC 7493) and so has no canonical form (RFC 8785): writing it
 * would silently turn it into another value.
 */
public class NotIJsonException extends IllegalArgumentException {

    /** Which of I-JSON's rules the value breaks. */
    public enum Kind {
        /** A string with a UTF-16 surrogate without its partner (RFC 7493, section 2.1). */
        LONE_SURROGATE,
        /** A number a double cannot carry without changing its value (RFC 7493, section 2.2). */
        INEXACT_NUMBER
    }

    private final Kind kind;

    public NotIJsonException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}
