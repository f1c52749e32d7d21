package dev.jobapi.api.rest;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import java.time.DateTimeException;
import java.time.LocalDate;
import java.util.regex.Pattern;

/**
 * Parses query parameters ourselves, so a value that is not a number or a date is a 400 naming the
 * parameter and its rule, not the 404 JAX-RS answers when it cannot convert a parameter.
 */
final class QueryValues {

    /** Dates the ledger can hold and a person means: a four-digit year from 2000 on. */
    private static final Pattern DATE = Pattern.compile("(2\\d{3}|[3-9]\\d{3})-\\d{2}-\\d{2}");

    private QueryValues() {}

    /** {@code value} as a whole number in [min, max]; absent or empty: {@code fallback}. */
    static long whole(String name, String value, long fallback, long min, long max) {
        if (value == null || value.isEmpty()) {
            return fallback;
        }
        try {
            long parsed = Long.parseLong(value);
            if (parsed >= min && parsed <= max) {
                return parsed;
            }
        } catch (NumberFormatException e) {
            // Answered below with the rule, like a number out of range.
        }
        throw new ProblemException(
                Problem.INVALID_QUERY, "'" + name + "' must be a whole number from " + min + " to " + max + ".");
    }

    /** {@code value} as a date YYYY-MM-DD from the year 2000 on; absent or empty: {@code fallback}. */
    static LocalDate date(String name, String value, LocalDate fallback) {
        if (value == null || value.isEmpty()) {
            return fallback;
        }
        try {
            if (DATE.matcher(value).matches()) {
                return LocalDate.parse(value);
            }
        } catch (DateTimeException e) {
            // Answered below with the rule, like any other malformed date.
        }
        throw new ProblemException(
                Problem.INVALID_QUERY, "'" + name + "' must be a date YYYY-MM-DD from the year 2000 on.");
    }
}
