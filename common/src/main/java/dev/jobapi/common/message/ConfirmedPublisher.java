package dev.jobapi.common.message;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.ReturnListener;
import dev.jobapi.common.tracing.RequestIds;
import dev.jobapi.common.tracing.Tracing;
import io.opentelemetry.context.Context;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The one way attempt messages are published (outbox relay, parking, hand-off at shutdown, dead
 * letter replay): persistent, {@code mandatory}, and done only when the broker confirmed every
 * message. A message the broker returns (no queue bound: the queue was deleted) or nacks is not
 * sent, and the caller keeps it. RabbitMQ sends a return before the confirm of the same message, so
 * once the confirms are in, every return is too.
 *
 * <p>Each message carries the trace context it was published in ({@code traceparent} in its
 * headers), so the worker's spans join the trace of the request that made the attempt, and that
 * request's id ({@link RequestIds#MESSAGE_HEADER}), so the worker's log lines of it name the request.
 */
@ApplicationScoped
public class ConfirmedPublisher {

    private static final Duration CONFIRM_TIMEOUT = Duration.ofSeconds(10);

    private final BrokerConnection broker;
    private final Tracing tracing;

    ConfirmedPublisher(BrokerConnection broker, Tracing tracing) {
        this.broker = broker;
        this.tracing = tracing;
    }

    /**
     * A message body, the trace context its headers carry (the span its publish belongs to) and the
     * id of the request it continues (null: none).
     */
    public record Traced(String body, Context trace, String requestId) {}

    /** One message to the work queue, through its exchange. */
    public void toWorkQueue(String body) {
        publish(AttemptTopology.EXCHANGE, AttemptTopology.ROUTING_KEY, List.of(body));
    }

    /** A copy of a received message (its headers kept) to the work queue. */
    public void copyToWorkQueue(AMQP.BasicProperties properties, byte[] body) {
        send(AttemptTopology.EXCHANGE, AttemptTopology.ROUTING_KEY, List.of(new Outgoing(properties, body)));
    }

    /**
     * Publishes the bodies in order, in the current trace context and with the current request id,
     * and waits for the broker's confirms.
     *
     * @throws NotRouted when the broker returned any of them (nothing bound) or nacked them
     */
    public void publish(String exchange, String routingKey, List<String> bodies) {
        Context current = Context.current();
        String requestId = RequestIds.current().orElse(null);
        publishTraced(
                exchange,
                routingKey,
                bodies.stream()
                        .map(body -> new Traced(body, current, requestId))
                        .toList());
    }

    /**
     * {@link #publish}, each message in a trace context of its own (the outbox relay's: each row
     * continues the trace that wrote it).
     */
    public void publishTraced(String exchange, String routingKey, List<Traced> messages) {
        send(
                exchange,
                routingKey,
                messages.stream()
                        .map(message -> new Outgoing(
                                json(message.trace(), message.requestId()),
                                message.body().getBytes(StandardCharsets.UTF_8)))
                        .toList());
    }

    private AMQP.BasicProperties json(Context trace, String requestId) {
        Map<String, Object> headers = tracing.headers(trace);
        if (requestId != null) {
            headers.put(RequestIds.MESSAGE_HEADER, requestId);
        }
        return new AMQP.BasicProperties.Builder()
                .contentType("application/json")
                .headers(headers.isEmpty() ? null : headers)
                .build();
    }

    private record Outgoing(AMQP.BasicProperties properties, byte[] body) {}

    /**
     * A publish that fails may have met a topology an operator or a broker lost (an exchange, a
     * binding or a queue deleted: a channel error, or a return): the topology is declared again and
     * the publish tried once more, so the flow heals without waiting for a restart. When even the
     * declaration fails (the broker is away) the first failure stands, and the caller keeps the
     * messages. A message routed by the first try and sent again is a duplicate, which every
     * consumer treats like a redelivery.
     */
    private void send(String exchange, String routingKey, List<Outgoing> messages) {
        try {
            sendOnce(exchange, routingKey, messages);
        } catch (RuntimeException first) {
            try {
                broker.declareTopology();
            } catch (RuntimeException declarationFailed) {
                first.addSuppressed(declarationFailed);
                throw first;
            }
            sendOnce(exchange, routingKey, messages);
        }
    }

    private void sendOnce(String exchange, String routingKey, List<Outgoing> messages) {
        broker.withPublishingChannel(channel -> {
            Set<String> returned = ConcurrentHashMap.newKeySet();
            ReturnListener onReturn = channel.addReturnListener(
                    r -> returned.add(r.getProperties().getMessageId()));
            try {
                for (Outgoing message : messages) {
                    // A message id of our own tells a return apart; the message is always persistent.
                    AMQP.BasicProperties properties = message.properties()
                            .builder()
                            .deliveryMode(2)
                            .messageId(UUID.randomUUID().toString())
                            .build();
                    channel.basicPublish(exchange, routingKey, true, properties, message.body());
                }
                try {
                    channel.waitForConfirmsOrDie(CONFIRM_TIMEOUT.toMillis());
                } catch (IOException nacked) {
                    throw new NotRouted("the broker refused the publish: " + nacked.getMessage());
                }
            } finally {
                channel.removeReturnListener(onReturn);
            }
            if (!returned.isEmpty()) {
                throw new NotRouted(returned.size() + " of " + messages.size()
                        + " message(s) returned unroutable by the broker (no queue bound to " + exchange + ")");
            }
            return null;
        });
    }

    /** The broker did not take a message into a queue; it is not sent. */
    public static class NotRouted extends RuntimeException {
        public NotRouted(String reason) {
            super(reason);
        }
    }
}
