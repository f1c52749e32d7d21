package dev.jobapi.common.message;

import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Ready only when RabbitMQ really works: every object of the attempt topology is declared again
 * (idempotent, a few round trips) and the work queue is read. A broker restarted without its
 * definitions, or an exchange, binding or queue an operator deleted, lets connections recover with
 * health still UP; this check puts them back, and reports DOWN when even that fails.
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
            broker.declareTopology();
            long messages = broker.withChannel(channel ->
                    (long) channel.queueDeclarePassive(AttemptTopology.QUEUE).getMessageCount());
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
}
