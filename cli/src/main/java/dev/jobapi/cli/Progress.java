package dev.jobapi.cli;

import java.io.PrintWriter;

/**
 * A progress line on stderr: rewritten in place on a terminal, one line per change otherwise (a log
 * or a CI job would otherwise get one endless line of carriage returns). A line equal to the last one
 * shown is not shown again.
 */
final class Progress {

    private static final int BAR_WIDTH = 30;

    private final PrintWriter err;
    private final boolean terminal;
    private int shown;
    private String last = "";

    Progress(PrintWriter err, boolean terminal) {
        this.err = err;
        this.terminal = terminal;
    }

    void show(String line) {
        if (line.equals(last)) {
            return;
        }
        last = line;
        if (terminal) {
            String padded = line.length() < shown ? line + " ".repeat(shown - line.length()) : line;
            // The carriage return alone, as a character: TerminalText lets only that through.
            err.print('\r');
            err.print(padded);
            shown = line.length();
        } else {
            err.println(line);
        }
        err.flush();
    }

    void bar(String label, int done, int total) {
        int filled = total == 0 ? BAR_WIDTH : done * BAR_WIDTH / total;
        show("  " + label + "[" + "#".repeat(filled) + " ".repeat(BAR_WIDTH - filled) + "] " + done + "/" + total);
    }

    /** Ends the line being rewritten, if any. */
    void done() {
        if (terminal && shown > 0) {
            err.println();
        }
        shown = 0;
        last = "";
    }
}
