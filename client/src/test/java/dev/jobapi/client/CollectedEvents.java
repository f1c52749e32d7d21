package dev.jobapi.client;

import dev.jobapi.client.model.FeedEvent;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A job's event stream read on a thread of its own until the server ends it or the connection
 * breaks, so a test can wait for an event while it does something else. Shared by the api's tests
 * and the system tests (this module's test-jar).
 */
public final class CollectedEvents implements AutoCloseable {

    private final JobEventStream stream;
    private final List<FeedEvent> received = new CopyOnWriteArrayList<>();
    private final CompletableFuture<Void> reading;

    public CollectedEvents(JobEventStream stream) {
        this.stream = stream;
        this.reading = CompletableFuture.runAsync(() -> stream.forEachRemaining(received::add));
    }

    public List<String> cursors() {
        return received.stream().map(FeedEvent::cursor).toList();
    }

    public List<String> kinds() {
        return received.stream().map(FeedEvent::kind).toList();
    }

    /** Whether the stream ended: the server closed it, or the connection broke. */
    public boolean ended() {
        return reading.isDone();
    }

    @Override
    public void close() {
        stream.close();
    }
}
