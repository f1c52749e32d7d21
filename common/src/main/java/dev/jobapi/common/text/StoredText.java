package dev.jobapi.common.text;

/**
 * Free text the system stores from sources it does not control (a provider's error message, an
 * applier's complaint about a patch a model wrote, a remote id): made storable before it reaches a
 * row. PostgreSQL refuses NUL in text, and a refused write would fail the very step that records the
 * outcome, so the work it belongs to would be retried for ever; a bound keeps one message from
 * growing every row and view that repeats it.
 */
public final class StoredText {

    /** Characters kept of one text; the rest is cut and marked. */
    public static final int MAX_CHARS = 4_000;

    private StoredText() {}

    /** {@code text} with NUL replaced by U+FFFD and cut to {@link #MAX_CHARS}; null stays null. */
    public static String of(String text) {
        if (text == null) {
            return null;
        }
        String storable = text.indexOf('\0') < 0 ? text : text.replace('\0', '\uFFFD');
        if (storable.length() <= MAX_CHARS) {
            return storable;
        }
        int end = MAX_CHARS;
        if (Character.isHighSurrogate(storable.charAt(end - 1))) {
            end--; // never split a surrogate pair
        }
        return storable.substring(0, end) + "… (" + (text.length() - end) + " more characters)";
    }
}
