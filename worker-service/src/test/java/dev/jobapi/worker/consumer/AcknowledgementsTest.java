package dev.jobapi.worker.consumer;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * The bookkeeping behind batched acks, on a channel that records the frames it is asked to send
 * and settles them as the broker would: an ack with {@code multiple} settles every unsettled tag up
 * to its own (docs/design.md, rule 8).
 */
class AcknowledgementsTest {

    private final RecordingChannel broker = new RecordingChannel();
    private final Acknowledgements acks = new Acknowledgements(broker.channel);

    @Test
    void committedDeliveriesFinishingOutOfOrderAreAckedTogetherOnlyUpToBelowTheLowestOpenTag() {
        receive(1, 10);
        ack(3, 2, 5, 4, 1);
        assertThat(broker.frames).as("five ready below open 6: not yet a batch").isEmpty();
        ack(7, 6, 8);
        assertThat(broker.frames).containsExactly("ack 8 multiple");
        ack(10);
        assertThat(broker.frames).as("9 is open").containsExactly("ack 8 multiple");
        ack(9);
        assertThat(broker.frames).as("nothing open: all sent").containsExactly("ack 8 multiple", "ack 10 multiple");
        assertThat(broker.unsettled).isEmpty();
    }

    @Test
    void anOpenLowTagIsNeverCoveredAndTheOnesAboveItAreAckedOneByOneOnceABatchOfThemWaits() {
        receive(1, 20);
        ack(2, 3, 4, 5, 6, 7, 8);
        assertThat(broker.frames).isEmpty();
        ack(9);
        assertThat(broker.frames)
                .containsExactly("ack 2", "ack 3", "ack 4", "ack 5", "ack 6", "ack 7", "ack 8", "ack 9");
        ack(10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20);
        assertThat(broker.frames).noneMatch(frame -> frame.endsWith("multiple"));
        assertThat(broker.unsettled).as("the slow one and the three that wait").containsExactly(1L, 18L, 19L, 20L);
        ack(1);
        assertThat(broker.frames).last().isEqualTo("ack 20 multiple");
        assertThat(broker.unsettled).isEmpty();
    }

    @Test
    void individualSettlesAreSentAtOnceNeverCountedInABatchAndDoNotHoldOneBack() {
        receive(1, 10);
        acks.settle(3, (channel, tag) -> channel.basicReject(tag, false));
        ack(1, 2, 4, 5, 6, 7, 8);
        assertThat(broker.frames).containsExactly("reject 3");
        ack(9);
        assertThat(broker.frames).containsExactly("reject 3", "ack 9 multiple");

        acks.settle(10, (channel, tag) -> channel.basicAck(tag, false)); // handed back
        assertThat(broker.frames).last().isEqualTo("ack 10");

        receive(11, 13);
        ack(12, 13);
        acks.settle(11, (channel, tag) -> channel.basicNack(tag, false, true));
        assertThat(broker.frames)
                .as("the lowest open one settled: nothing is open, the rest go at once")
                .endsWith("nack 11", "ack 13 multiple");
        assertThat(broker.unsettled).isEmpty();
    }

    @Test
    void theDrainSendsEveryWaitingAckAndLeavesTheOpenOnesUnsettled() {
        receive(1, 6);
        ack(1, 2, 4, 6);
        acks.flush();
        assertThat(broker.frames).containsExactly("ack 2 multiple", "ack 4", "ack 6");
        assertThat(broker.unsettled).containsExactly(3L, 5L);
        acks.flush();
        assertThat(broker.frames).hasSize(3);
    }

    @Test
    void aClosedChannelIsSentNothing() {
        receive(1, 8);
        broker.open = false;
        ack(1, 2, 3, 4, 5, 6, 7, 8);
        acks.flush();
        assertThat(broker.frames).isEmpty();
    }

    @Test
    void acksFromManyThreadsNeverSettleADeliveryThatHasNotCommittedAndSettleEachOnce() throws Exception {
        int deliveries = 5_000;
        receive(1, deliveries);
        List<Long> tags =
                new ArrayList<>(LongStream.rangeClosed(1, deliveries).boxed().toList());
        Collections.shuffle(tags, new Random(8));
        ExecutorService pool = Executors.newFixedThreadPool(16);
        for (long tag : tags) {
            pool.execute(() -> {
                if (tag % 97 == 0) {
                    acks.settle(tag, (channel, t) -> channel.basicReject(t, false));
                } else {
                    broker.committed.add(tag);
                    acks.ack(tag);
                }
            });
        }
        pool.shutdown();
        assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
        assertThat(broker.violations).isEmpty();
        assertThat(broker.unsettled).isEmpty();
        assertThat(broker.frames.size()).as("fewer frames than deliveries").isLessThan(deliveries);
    }

    private void receive(long first, long last) {
        for (long tag = first; tag <= last; tag++) {
            broker.unsettled.add(tag);
            acks.received(tag);
        }
    }

    private void ack(long... tags) {
        for (long tag : tags) {
            broker.committed.add(tag);
            acks.ack(tag);
        }
    }

    /** A channel that keeps the frames sent on it and what the broker would still hold unsettled. */
    private static final class RecordingChannel {
        final List<String> frames = Collections.synchronizedList(new ArrayList<>());
        final TreeSet<Long> unsettled = new TreeSet<>();
        final Set<Long> committed = ConcurrentHashMap.newKeySet();
        final List<String> violations = Collections.synchronizedList(new ArrayList<>());
        volatile boolean open = true;

        final Channel channel = (Channel) Proxy.newProxyInstance(
                Channel.class.getClassLoader(), new Class<?>[] {Channel.class}, (proxy, method, args) -> {
                    switch (method.getName()) {
                        case "isOpen":
                            return open;
                        case "basicAck":
                            settle("ack", (long) args[0], (boolean) args[1]);
                            return null;
                        case "basicReject":
                            settle("reject", (long) args[0], false);
                            return null;
                        case "basicNack":
                            settle("nack", (long) args[0], (boolean) args[1]);
                            return null;
                        case "hashCode":
                            return System.identityHashCode(proxy);
                        case "equals":
                            return proxy == args[0];
                        default:
                            throw new UnsupportedOperationException(method.getName());
                    }
                });

        private void settle(String what, long tag, boolean multiple) {
            frames.add(what + " " + tag + (multiple ? " multiple" : ""));
            synchronized (unsettled) {
                if (!unsettled.contains(tag)) {
                    violations.add(what + " of " + tag + ", not unsettled (the broker closes the channel)");
                }
                Set<Long> settled = multiple ? unsettled.headSet(tag, true) : Set.of(tag);
                for (long each : new ArrayList<>(settled)) {
                    if ("ack".equals(what) && !committed.contains(each)) {
                        violations.add("ack of " + tag + " settled " + each + ", not committed");
                    }
                    unsettled.remove(each);
                }
            }
        }
    }
}
