package dev.jobapi.cli;

import java.io.FilterWriter;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;

/**
 * Everything jobctl prints goes through this writer, so text the server relays (a provider's
 * reason, a timeline detail, a problem's detail) can never drive the terminal: control characters
 * other than newline and tab (ESC sequences, carriage return, backspace, C1 controls) and the
 * bidirectional overrides that reorder what is shown are written as visible escapes ({@code
 * \u001b}). A single character written on its own ({@link #write(int)}) passes unchanged: that is
 * how jobctl's own progress line sends its carriage return, and no relayed text is written that way.
 */
final class TerminalText extends FilterWriter {

    private TerminalText(Writer out) {
        super(out);
    }

    /** {@code out}, escaping as above, flushing on every println like the writers picocli makes. */
    static PrintWriter around(PrintWriter out) {
        return new PrintWriter(new TerminalText(out), true);
    }

    @Override
    public void write(char[] text, int offset, int length) throws IOException {
        write(new String(text, offset, length), 0, length);
    }

    @Override
    public void write(String text, int offset, int length) throws IOException {
        StringBuilder safe = new StringBuilder(length);
        for (int i = offset; i < offset + length; i++) {
            char c = text.charAt(i);
            if (isHostile(c)) {
                safe.append(String.format("\\u%04x", (int) c));
            } else {
                safe.append(c);
            }
        }
        out.write(safe.toString());
    }

    /** Controls a terminal acts on, and the marks that reorder text on screen. */
    static boolean isHostile(char c) {
        if (c == '\n' || c == '\t') {
            return false;
        }
        return c < 0x20
                || (c >= 0x7f && c <= 0x9f)
                || c == '\u200e'
                || c == '\u200f'
                || (c >= '\u202a' && c <= '\u202e')
                || (c >= '\u2066' && c <= '\u2069');
    }
}
