package dev.jobapi.common.message;

import io.smallrye.health.api.HealthGroup;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;

/**
 * Whether RabbitMQ really works: every object of the attempt topology is declared again
 * (idempotent, a few round trips) and the work queue is read. A broker restarted without its
 * definitions, or an exchange, binding or queue an operator deleted, is put back by this check, and
 * it reports DOWN when even that fails.
 *
 * <p>It is a health group of its own ({@code /q/health/group/broker}), not readiness: the api takes
 * jobs through the outbox while the broker is away, so a broker outage must not take every api pod
 * out of its Service. The worker's readiness is its consumer's subscription, which needs the broker
 * anyway. The gauge {@code jobapi.broker.connected} ({@link BrokerConnection}) shows dashboards
 * and alerts whether the process holds a connection.
 */
@HealthGroup(BrokerHealthCheck.GROUP)
@ApplicationScoped
public class BrokerHealthCheck implements HealthCheck {

    public static final String GROUP = "broker";

    private final BrokerConnection broker;

    BrokerHealthCheck(BrokerConnection broker) {
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
