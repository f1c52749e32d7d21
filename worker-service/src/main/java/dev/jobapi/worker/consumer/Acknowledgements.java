package dev.jobapi.worker.consumer;

import com.rabbitmq.client.Channel;
import java.io.IOException;
import java.util.NavigableSet;
import java.util.TreeSet;
import org.jboss.logging.Logger;

/**
 * The acknowledgements of one subscription's channel, whose delivery tags are numbered on it alone.
 * A committed delivery is acked together with others in one {@code basic.ack} with {@code multiple}
 * set, which acks every unsettled delivery of the channel up to its tag: so it reaches only up to
 * below the lowest tag still open (received, neither committed nor settled), and a delivery still
 * at work is never acked with the others (docs/design.md, rule 8). The channel is the lock, as for
 * every frame sent on it; a closed channel sends nothing (the broker returned what it held).
 */
final class Acknowledgements {

    private static final Logger LOG = Logger.getLogger(Acknowledgements.class);

    /**
     * How many committed deliveries may wait for one ack frame: eight acks in a frame, and at most
     * seven of the prefetch window (32 by default) held by work already done.
     */
    static final int BATCH = 8;

    /** How a delivery is settled on its own: a reject, a nack, the ack of a message handed back. */
    @FunctionalInterface
    interface Settlement {
        void send(Channel channel, long tag) throws IOException;
    }

    private final Channel channel;
    /** Received and neither committed nor settled: no ack with {@code multiple} may reach them. */
    private final NavigableSet<Long> open = new TreeSet<>();
    /** Committed, the ack not yet sent. */
    private final NavigableSet<Long> ready = new TreeSet<>();

    Acknowledgements(Channel channel) {
        this.channel = channel;
    }

    /** A delivery arrived; called before it is worked on or handed back. */
    void received(long tag) {
        synchronized (channel) {
            open.add(tag);
        }
    }

    /** The delivery's transactions committed: it is acked now or with the next batch. */
    void ack(long tag) {
        synchronized (channel) {
            open.remove(tag);
            ready.add(tag);
            sendWhatIsDue();
        }
    }

    /** Settles the delivery on its own, at once; it no longer holds a batch back. */
    void settle(long tag, Settlement settlement) {
        synchronized (channel) {
            open.remove(tag);
            send(() -> settlement.send(channel, tag));
            sendWhatIsDue();
        }
    }

    /** Sends every ack still waiting: before the channel closes, committed work is not handed back. */
    void flush() {
        synchronized (channel) {
            sendAllReady();
        }
    }

    /**
     * A batch is due when it covers {@link #BATCH} deliveries or everything received. Ready ones
     * that a lower open tag holds back (a slow provider call can take minutes) are acked one by one
     * once {@link #BATCH} of them wait.
     */
    private void sendWhatIsDue() {
        NavigableSet<Long> coverable = coverable();
        if (!coverable.isEmpty() && (open.isEmpty() || coverable.size() >= BATCH)) {
            ackCovering(coverable);
        } else if (ready.size() >= BATCH) {
            sendAllReady();
        }
    }

    private void sendAllReady() {
        NavigableSet<Long> coverable = coverable();
        if (!coverable.isEmpty()) {
            ackCovering(coverable);
        }
        for (long tag : ready) {
            send(() -> channel.basicAck(tag, false));
        }
        ready.clear();
    }

    /** The ready deliveries below the lowest open tag: one ack with {@code multiple} may take them all. */
    private NavigableSet<Long> coverable() {
        return open.isEmpty() ? ready : ready.headSet(open.first(), false);
    }

    private void ackCovering(NavigableSet<Long> coverable) {
        long highest = coverable.last();
        send(() -> channel.basicAck(highest, true));
        coverable.clear();
    }

    private void send(Frame frame) {
        try {
            if (channel.isOpen()) {
                frame.send();
            }
        } catch (IOException | RuntimeException e) {
            LOG.warnf("Could not settle a delivery (the broker returns it): %s", e.toString());
        }
    }

    @FunctionalInterface
    private interface Frame {
        void send() throws IOException;
    }
}
