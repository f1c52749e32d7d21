package dev.jobapi.client;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jobapi.client.model.FeedEvent;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * An open stream of a job's events (Server-Sent Events, GET /jobs/{id}/events), read one event at a
 * time. Comments (the server's keep-alives) and fields other than {@code data} are skipped; each
 * event's data is a {@link FeedEvent} whose cursor is also the event's id.
 */
public final class JobEventStream implements AutoCloseable {

    private final InputStream body;
    private final BufferedReader lines;
    private final ObjectMapper mapper;

    JobEventStream(InputStream body, ObjectMapper mapper) {
        this.body = body;
        this.lines = new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8));
        this.mapper = mapper;
    }

    /**
     * The next event, waiting for it; empty once the server ended the stream (after the job's last
     * event, or when it stopped: resume with the last cursor).
     *
     * @throws UncheckedIOException when the connection broke
     */
    public Optional<FeedEvent> next() {
        StringBuilder data = new StringBuilder();
        try {
            String line;
            while ((line = lines.readLine()) != null) {
                if (line.isEmpty()) {
                    if (!data.isEmpty()) {
                        return Optional.of(mapper.readValue(data.toString(), FeedEvent.class));
                    }
                } else if (line.startsWith("data:")) {
                    if (!data.isEmpty()) {
                        data.append('\n');
                    }
                    data.append(line.startsWith("data: ") ? line.substring(6) : line.substring(5));
                }
            }
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Hands every event to {@code action} as it arrives, until the server ends the stream.
     *
     * @throws UncheckedIOException when the connection broke
     */
    public void forEachRemaining(Consumer<FeedEvent> action) {
        Optional<FeedEvent> event;
        while ((event = next()).isPresent()) {
            action.accept(event.get());
        }
    }

    /** Closes the connection; a {@link #next()} waiting on another thread ends. */
    @Override
    public void close() {
        try {
            body.close();
        } catch (IOException alreadyGone) {
            // nothing left to release
        }
    }
}
