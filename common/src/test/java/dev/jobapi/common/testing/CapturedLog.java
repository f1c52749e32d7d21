package dev.jobapi.common.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import org.jboss.logmanager.ExtLogRecord;
import org.jboss.logmanager.Logger;

/**
 * The lines one class logs while this is open, each with the logging context it had when it was
 * logged (on the thread that logged it). Closing it stops the capture.
 */
public final class CapturedLog implements AutoCloseable {

    private final Logger logger;
    private final List<ExtLogRecord> lines = new CopyOnWriteArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord record) {
            ExtLogRecord line = (ExtLogRecord) record;
            line.copyAll(); // the logging context is read lazily, from the logging thread, unless copied now
            lines.add(line);
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };

    private CapturedLog(Class<?> source) {
        this.logger = Logger.getLogger(source.getName());
        logger.addHandler(handler);
    }

    /** Starts capturing what {@code source} logs. */
    public static CapturedLog of(Class<?> source) {
        return new CapturedLog(source);
    }

    /** The lines so far, as logged. */
    public List<ExtLogRecord> lines() {
        return List.copyOf(lines);
    }

    /** The messages of the lines so far that start with {@code prefix}. */
    public List<String> messagesStartingWith(String prefix) {
        return lines.stream()
                .map(ExtLogRecord::getFormattedMessage)
                .filter(message -> message.startsWith(prefix))
                .toList();
    }

    @Override
    public void close() {
        logger.removeHandler(handler);
    }
}
