package dev.jobapi.api.bulk;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The one filter language of bulk actions, for dead letters and jobs alike: every field optional,
 * the empty filter matches every candidate of the action. {@code since} is inclusive, {@code until}
 * exclusive; for dead letters they bound the time the mover stored the letter, for jobs and their
 * quarantined attempts the job's creation. {@code reason} is a dead letter's broker reason (exact),
 * or a job's review reason or an attempt's reason (contained, case-insensitive). {@code state} is a
 * job's state; a dead letter's action takes only {@code pending}.
 */
public record BulkFilter(String owner, String provider, String state, String reason, Instant since, Instant until) {

    private static final int MAX_TEXT = 200;

    /** What a client sends: the same fields, times as ISO-8601 instants with their offset. */
    public record Wire(String owner, String provider, String state, String reason, String since, String until) {}

    /** The filter, or a 400 {@code invalid-request} naming the field and its rule. */
    public static BulkFilter parse(Wire wire) {
        if (wire == null) {
            return new BulkFilter(null, null, null, null, null, null);
        }
        Instant from = instant("since", wire.since());
        Instant to = instant("until", wire.until());
        if (from != null && to != null && !from.isBefore(to)) {
            throw new ProblemException(Problem.INVALID_REQUEST, "'since' must be before 'until'.");
        }
        return new BulkFilter(
                text("owner", wire.owner()),
                text("provider", wire.provider()),
                text("state", wire.state()),
                text("reason", wire.reason()),
                from,
                to);
    }

    /**
     * The fields that filter, in a fixed order, absent ones left out: what the token signs and the
     * bulk action stores, so one filter has one form however the client spelled it.
     */
    public Map<String, String> canonical() {
        Map<String, String> fields = new LinkedHashMap<>();
        put(fields, "owner", owner);
        put(fields, "provider", provider);
        put(fields, "state", state);
        put(fields, "reason", reason);
        put(fields, "since", since == null ? null : since.toString());
        put(fields, "until", until == null ? null : until.toString());
        return fields;
    }

    private static void put(Map<String, String> fields, String name, String value) {
        if (value != null) {
            fields.put(name, value);
        }
    }

    private static String text(String name, String value) {
        if (value == null || value.isEmpty()) {
            return null;
        }
        if (value.length() > MAX_TEXT || value.chars().anyMatch(Character::isISOControl)) {
            throw new ProblemException(
                    Problem.INVALID_REQUEST,
                    "'" + name + "' must be at most " + MAX_TEXT + " characters, none of them control.");
        }
        return value;
    }

    private static Instant instant(String name, String value) {
        if (value == null || value.isEmpty()) {
            return null;
        }
        try {
            return OffsetDateTime.parse(value).toInstant();
        } catch (DateTimeParseException e) {
            throw new ProblemException(
                    Problem.INVALID_REQUEST,
                    "'" + name + "' must be an ISO-8601 instant with its offset, e.g. 2026-12-03T14:00:00Z.");
        }
    }
}
