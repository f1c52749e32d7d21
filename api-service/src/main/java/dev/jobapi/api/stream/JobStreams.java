package dev.jobapi.api.stream;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jobapi.api.config.JobApiConfig;
import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.ws.rs.sse.OutboundSseEvent;
import jakarta.ws.rs.sse.Sse;
import jakarta.ws.rs.sse.SseBroadcaster;
import jakarta.ws.rs.sse.SseEventSink;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jboss.logging.Logger;

/**
 * The open event streams of this api process (GET /jobs/{id}/events) and what moves them.
 *
 * <p>A stream holds a cursor and, when woken, reads its job's events after it from PostgreSQL and
 * sends them in order ({@link TimelineReads}). It is woken by a job change notice for its job (the
 * commit was made through any api process or worker: {@link JobChangeListener}), by a reread of
 * every stream every {@code jobapi.streams.reread} (what a lost notice costs), and again shortly
 * when a read found events held back behind a transaction still running. It ends after the job's
 * last event once the job is terminal, when a send fails or times out (the client went away), or
 * when the process stops; a client resumes with Last-Event-ID and loses nothing, since every event
 * is read from the database.
 */
@ApplicationScoped
public class JobStreams {

    private static final Logger LOG = Logger.getLogger(JobStreams.class);

    /** Events one read sends at most; a full batch reads again at once. */
    static final int EVENTS_PER_READ = 200;

    /** How soon a stream reads again when events were held back behind a running transaction. */
    static final Duration HELD_BACK_RETRY = Duration.ofMillis(50);

    /** How soon a stream reads again after its read failed (the database away, a failover). */
    static final Duration READ_RETRY = Duration.ofSeconds(1);

    /** Threads that read and send; a send waits at most the send timeout. */
    private static final int PUMP_THREADS = 4;

    private final TimelineReads reads;
    private final ObjectMapper json;
    private final JobApiConfig.Streams config;
    private final Clock clock;
    private final ConcurrentMap<UUID, Set<Stream>> byJob = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, Integer> byCaller = new ConcurrentHashMap<>();
    private final AtomicInteger open = new AtomicInteger();
    private final ScheduledExecutorService pump = Executors.newScheduledThreadPool(PUMP_THREADS, work -> {
        Thread thread = new Thread(work, "job-streams");
        thread.setDaemon(true);
        return thread;
    });

    JobStreams(TimelineReads reads, ObjectMapper json, JobApiConfig config, Clock clock) {
        this.reads = reads;
        this.json = json;
        this.config = config.streams();
        this.clock = clock;
    }

    void start(@Observes StartupEvent event, MeterRegistry registry) {
        Gauge.builder("jobapi.streams.open", open, AtomicInteger::get)
                .description("Event streams (GET /jobs/{id}/events) this api process holds open")
                .strongReference(true)
                .register(registry);
        long every = config.reread().toMillis();
        pump.scheduleWithFixedDelay(this::rereadAll, every, every, TimeUnit.MILLISECONDS);
    }

    void stop(@Observes ShutdownEvent event) {
        pump.shutdownNow();
        byJob.values().forEach(streams -> streams.forEach(Stream::close));
    }

    /**
     * Opens a stream of the job's events after {@code from} on the sink, for {@code caller}; refuses
     * with 429 too-many-streams past the caller's bound, 503 server-busy past the process's.
     */
    public void open(String caller, UUID jobId, EventCursor from, SseEventSink sink, Sse sse) {
        AtomicBoolean admitted = new AtomicBoolean();
        byCaller.compute(caller, (c, streams) -> {
            int held = streams == null ? 0 : streams;
            if (held >= config.perCaller()) {
                return streams;
            }
            admitted.set(true);
            return held + 1;
        });
        if (!admitted.get()) {
            throw new ProblemException(
                    Problem.TOO_MANY_STREAMS,
                    "You hold " + config.perCaller() + " open event streams on this server; close one first.");
        }
        if (open.incrementAndGet() > config.perProcess()) {
            open.decrementAndGet();
            releaseCallerSlot(caller);
            throw new ProblemException(Problem.SERVER_BUSY, "This server holds as many event streams as it may.");
        }
        Stream stream = new Stream(caller, jobId, from, sink, sse);
        // Added and removed inside compute, so a stream never lands in a set its job's last close just dropped.
        byJob.compute(jobId, (id, streams) -> {
            Set<Stream> all = streams == null ? ConcurrentHashMap.newKeySet() : streams;
            all.add(stream);
            return all;
        });
        stream.start();
    }

    private void releaseCallerSlot(String caller) {
        byCaller.computeIfPresent(caller, (c, held) -> held == 1 ? null : held - 1);
    }

    /** Wakes the streams of these jobs (a job change notice). */
    public void wake(Collection<UUID> jobIds) {
        for (UUID jobId : jobIds) {
            Set<Stream> streams = byJob.get(jobId);
            if (streams != null) {
                streams.forEach(Stream::wake);
            }
        }
    }

    /** Wakes every stream: notices may have been lost (the listener subscribed again). */
    public void wakeAll() {
        byJob.values().forEach(streams -> streams.forEach(Stream::wake));
    }

    /** Streams open on this process now. */
    public int openCount() {
        return open.get();
    }

    private void rereadAll() {
        try {
            Instant quietSince = clock.instant().minus(config.heartbeat());
            byJob.values()
                    .forEach(streams -> streams.forEach(stream -> {
                        if (stream.lastSent.isBefore(quietSince)) {
                            stream.heartbeat();
                        }
                        stream.wake();
                    }));
        } catch (RuntimeException e) { // the reread must outlive any one stream's fault
            LOG.errorf(e, "Rereading the event streams failed; the next round retries");
        }
    }

    /** One open stream. Reads and sends one at a time: a wake during a read queues one more read. */
    private final class Stream {
        private final String caller;
        private final UUID jobId;
        private final SseEventSink sink;
        private final Sse sse;
        private final AtomicBoolean queued = new AtomicBoolean();
        private final AtomicBoolean closed = new AtomicBoolean();
        private EventCursor cursor; // guarded by this
        private volatile Instant lastSent;

        Stream(String caller, UUID jobId, EventCursor from, SseEventSink sink, Sse sse) {
            this.caller = caller;
            this.jobId = jobId;
            this.cursor = from;
            this.sink = sink;
            this.sse = sse;
            this.lastSent = clock.instant();
        }

        /**
         * Listens for the client going away, then sends what the job has so far, on the request's own
         * thread: the first write of an SSE response must come from the resource method, before it
         * returns, or it races RESTEasy Reactive's setting up of the response (CI lost a stream's first
         * event that way when the pump wrote it). Called once the stream is registered, so a close that
         * comes at once finds it to remove. The close callback of a broadcaster is the JAX-RS way to
         * hear of a client gone: the sink fires it when its connection closes, not at the next write.
         */
        void start() {
            SseBroadcaster closeWatch = sse.newBroadcaster();
            closeWatch.onClose(closedSink -> close());
            closeWatch.register(sink);
            queued.set(true);
            readAndSend();
        }

        void wake() {
            if (!closed.get() && queued.compareAndSet(false, true)) {
                try {
                    pump.execute(this::readAndSend);
                } catch (RuntimeException stopping) { // the pump shut down with the process
                    close();
                }
            }
        }

        private synchronized void readAndSend() {
            queued.set(false);
            if (closed.get() || sink.isClosed()) {
                close();
                return;
            }
            try {
                TimelineReads.JobBatch batch = reads.ofJob(jobId, cursor, EVENTS_PER_READ);
                for (FeedEvent event : batch.released()) {
                    send(sse.newEventBuilder()
                            .id(event.cursor())
                            .name(event.kind())
                            .data(json.writeValueAsString(event))
                            .build());
                    cursor = EventCursor.parse("cursor", event.cursor());
                }
                if (batch.full()) {
                    wake();
                } else if (batch.heldBack()) {
                    pump.schedule(this::wake, HELD_BACK_RETRY.toMillis(), TimeUnit.MILLISECONDS);
                } else if (batch.state().map(state -> state.isTerminal()).orElse(true)) {
                    close(); // the job's last event is sent (or the job is gone)
                }
            } catch (SQLException databaseAway) {
                LOG.warnf(
                        "Reading job %s's events failed; the stream reads again in %d ms: %s",
                        jobId, READ_RETRY.toMillis(), databaseAway);
                pump.schedule(this::wake, READ_RETRY.toMillis(), TimeUnit.MILLISECONDS);
            } catch (JsonProcessingException | RuntimeException e) {
                LOG.debugf("Job %s's stream ended: %s", jobId, e);
                close();
            }
        }

        void heartbeat() {
            pump.execute(() -> {
                synchronized (this) {
                    if (!closed.get()) {
                        send(sse.newEventBuilder().comment("keep-alive").build());
                    }
                }
            });
        }

        /** Sends one event, waiting at most the send timeout; a failed send ends the stream. */
        private void send(OutboundSseEvent event) {
            try {
                sink.send(event).toCompletableFuture().get(config.sendTimeout().toMillis(), TimeUnit.MILLISECONDS);
                lastSent = clock.instant();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                close();
                throw new IllegalStateException("Interrupted while sending", e);
            } catch (ExecutionException | TimeoutException | RuntimeException e) {
                close();
                throw new IllegalStateException("The client did not take the event", e);
            }
        }

        void close() {
            if (closed.compareAndSet(false, true)) {
                byJob.computeIfPresent(jobId, (id, streams) -> {
                    streams.remove(this);
                    return streams.isEmpty() ? null : streams;
                });
                releaseCallerSlot(caller);
                open.decrementAndGet();
                try {
                    sink.close();
                } catch (RuntimeException alreadyGone) {
                    LOG.debugf("Closing job %s's stream: %s", jobId, alreadyGone);
                }
            }
        }
    }
}
