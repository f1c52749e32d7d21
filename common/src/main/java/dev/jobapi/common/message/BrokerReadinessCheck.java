package dev.jobapi.common.message;

import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Ready only when RabbitMQ really works: the attempt queue must exist. A broker restarted without
 * its queues lets the connector reconnect with health still UP; this check re-declares the topology
 * and reports DOWN if even that fails.
 */
@Readiness
@ApplicationScoped
public class BrokerReadinessCheck implements HealthCheck {

    private final BrokerConnection broker;

    BrokerReadinessCheck(BrokerConnection broker) {
        this.broker = broker;
    }

    @Override
    public HealthCheckResponse call() {
        try {
            long messages;
            try {
                messages = queuedMessages();
            } catch (RuntimeException missing) {
                // The broker lost the queue (or the connection): declare everything again, then look again.
                broker.declareTopology();
                messages = queuedMessages();
            }
            return HealthCheckResponse.named("rabbitmq-attempt-queue")
                    .up()
                    .withData("queue", AttemptTopology.QUEUE)
                    .withData("messages", messages)
                    .build();
        } catch (RuntimeException e) {
            return HealthCheckResponse.named("rabbitmq-attempt-queue")
                    .down()
                    .withData("error", e.toString())
                    .build();
        }
    }

    private long queuedMessages() {
        return broker.withChannel(channel ->
                (long) channel.queueDeclarePassive(AttemptTopology.QUEUE).getMessageCount());
    }
}
