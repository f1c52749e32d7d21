package dev.jobapi.api.stream;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A place in the order the feed and the streams follow (docs/design.md "Push"): the id of the
 * transaction that wrote an event, then the event's id. Written {@code <tx>-<id>}, both decimal; a
 * client passes it back as it got it (as {@code after}, or the stream's {@code Last-Event-ID}).
 */
public record EventCursor(long tx, long id) {

    /** Before every event. */
    public static final EventCursor START = new EventCursor(0, 0);

    /** A cursor's text: what {@link #toString()} writes, and nothing else. */
    public static final String PATTERN = "^[0-9]{1,19}-[0-9]{1,19}$";

    private static final Pattern WRITTEN = Pattern.compile("([0-9]{1,19})-([0-9]{1,19})");

    /** The cursor a client sent, or {@link #START} when it sent none; a 400 naming {@code what} if malformed. */
    public static EventCursor parse(String what, String text) {
        if (text == null || text.isEmpty()) {
            return START;
        }
        Matcher parts = WRITTEN.matcher(text);
        try {
            if (parts.matches()) {
                return new EventCursor(Long.parseLong(parts.group(1)), Long.parseLong(parts.group(2)));
            }
        } catch (NumberFormatException tooLarge) {
            // answered below, as any other malformed cursor
        }
        throw new ProblemException(
                Problem.INVALID_QUERY,
                what + " must be a cursor this API gave, <transaction>-<event> in decimal, such as 7421-88123");
    }

    @Override
    public String toString() {
        return tx + "-" + id;
    }
}
