package dev.jobapi.worker.consumer;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jobapi.common.message.AttemptMessage;
import dev.jobapi.worker.service.AttemptPipeline;
import io.quarkus.runtime.ShutdownEvent;
import io.smallrye.reactive.messaging.annotations.Blocking;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.jboss.logging.Logger;
import org.jboss.logging.MDC;

/**
 * Consumes {@code jobs.attempts} with manual acknowledgement (DESIGN.md rule 8): a message is acked
 * only after the pipeline's transactions committed; any failure nacks it back to the quorum queue,
 * whose delivery limit dead-letters a poison message (rule 13). Concurrency is bounded by the
 * {@code attempt-workers} pool and prefetch by {@code max-outstanding-messages}.
 */
@ApplicationScoped
public class AttemptConsumer {

    private static final Logger LOG = Logger.getLogger(AttemptConsumer.class);

    private final AttemptPipeline pipeline;
    private final DelayQueue delayQueue;
    private final ObjectMapper mapper;
    private final Duration shutdownGrace;
    private final AtomicInteger inFlight = new AtomicInteger();
    private volatile boolean draining;

    AttemptConsumer(
            AttemptPipeline pipeline,
            DelayQueue delayQueue,
            ObjectMapper mapper,
            dev.jobapi.worker.config.WorkerConfig config) {
        this.pipeline = pipeline;
        this.delayQueue = delayQueue;
        this.mapper = mapper;
        this.shutdownGrace = config.worker().shutdownGrace();
    }

    @Incoming("attempts")
    @Blocking(value = "attempt-workers", ordered = false)
    public CompletionStage<Void> consume(Message<?> message) {
        if (draining) {
            // Shutting down: hand it back untouched for another worker.
            return message.nack(new IllegalStateException("worker is shutting down"));
        }
        inFlight.incrementAndGet();
        try {
            String body = text(message.getPayload());
            AttemptMessage attempt = mapper.readValue(body, AttemptMessage.class);
            if (attempt.attemptId() == null) {
                throw new IllegalArgumentException("message names no attemptId: " + body);
            }
            // Every log line of this delivery carries the ids that link it to the job's timeline.
            MDC.put("attemptId", String.valueOf(attempt.attemptId()));
            MDC.put("jobId", String.valueOf(attempt.jobId()));
            boolean redelivered = message.getMetadata(IncomingRabbitMQMetadata.class)
                    .map(IncomingRabbitMQMetadata::isRedeliver)
                    .orElse(false);
            if (pipeline.process(attempt, redelivered) == AttemptPipeline.Disposition.PARK) {
                delayQueue.park(body);
            }
            return message.ack();
        } catch (Exception e) {
            LOG.warnf("Attempt message not processed, returning it to the queue: %s", e.toString());
            return message.nack(e);
        } finally {
            MDC.remove("attemptId");
            MDC.remove("jobId");
            inFlight.decrementAndGet();
        }
    }

    /** Stops taking new work first, then gives what is in flight a bounded time to finish. */
    void drain(@Observes @Priority(1) ShutdownEvent event) throws InterruptedException {
        draining = true;
        long deadline = System.nanoTime() + shutdownGrace.toNanos();
        while (inFlight.get() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        if (inFlight.get() > 0) {
            LOG.warnf("Abandoning %d attempt message(s) unacked; they will be redelivered", inFlight.get());
        }
    }

    private static String text(Object payload) {
        if (payload instanceof JsonObject json) {
            return json.encode();
        }
        if (payload instanceof byte[] bytes) {
            return new String(bytes, StandardCharsets.UTF_8);
        }
        if (payload instanceof Buffer buffer) {
            return buffer.toString(StandardCharsets.UTF_8);
        }
        return String.valueOf(payload);
    }
}
