package dev.jobapi.common.message;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.TimeoutException;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * A plain AMQP connection beside the SmallRye channels, for what the connector does not do:
 * declaring the topology before any channel starts, probing the broker for readiness, parking
 * messages in the delay queue and reading the dead-letter queue. It reads the same
 * {@code rabbitmq-*} keys as the connector, so both always talk to the same broker and vhost.
 */
@ApplicationScoped
public class BrokerConnection {

    private static final Logger LOG = Logger.getLogger(BrokerConnection.class);

    @ConfigProperty(name = "rabbitmq-host", defaultValue = "127.0.0.1")
    String host;

    @ConfigProperty(name = "rabbitmq-port", defaultValue = "5672")
    int port;

    @ConfigProperty(name = "rabbitmq-username", defaultValue = "guest")
    String username;

    @ConfigProperty(name = "rabbitmq-password", defaultValue = "guest")
    String password;

    @ConfigProperty(name = "rabbitmq-virtual-host", defaultValue = "/")
    String virtualHost;

    private Connection connection;

    /**
     * Declares the topology before SmallRye Reactive Messaging starts its channels (it observes the
     * same event at priority LIBRARY_BEFORE; lower values run first).
     */
    void declareOnStartup(@Observes @Priority(10) StartupEvent event) {
        declareTopology();
    }

    void close(@Observes ShutdownEvent event) {
        synchronized (this) {
            if (connection != null && connection.isOpen()) {
                try {
                    connection.close();
                } catch (IOException e) {
                    LOG.debug("Closing the AMQP connection failed", e);
                }
            }
        }
    }

    /** Declares (or re-declares, after a broker lost its queues) the attempt topology. */
    public void declareTopology() {
        withChannel(channel -> {
            AttemptTopology.declare(channel);
            return null;
        });
    }

    /** Runs work on a fresh channel of the shared connection, closing the channel afterwards. */
    public <T> T withChannel(ChannelWork<T> work) {
        try (Channel channel = connection().createChannel()) {
            return work.run(channel);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (TimeoutException e) {
            throw new UncheckedIOException(new IOException("RabbitMQ did not answer in time", e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while talking to RabbitMQ", e);
        }
    }

    private synchronized Connection connection() throws IOException, TimeoutException {
        if (connection == null || !connection.isOpen()) {
            ConnectionFactory factory = factory();
            // Reconnect after a broker restart; topology is re-declared by the readiness probe.
            factory.setAutomaticRecoveryEnabled(true);
            connection = factory.newConnection("jobapi-broker-connection");
        }
        return connection;
    }

    /**
     * A connection of its own for a long-lived consumer, without automatic recovery: its owner
     * notices a closed connection or a cancelled consumer and subscribes again itself, so it always
     * knows which deliveries it still holds.
     */
    public Connection newConsumerConnection(String name) {
        ConnectionFactory factory = factory();
        factory.setAutomaticRecoveryEnabled(false);
        try {
            return factory.newConnection(name);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (TimeoutException e) {
            throw new UncheckedIOException(new IOException("RabbitMQ did not answer in time", e));
        }
    }

    private ConnectionFactory factory() {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost(host);
        factory.setPort(port);
        factory.setUsername(username);
        factory.setPassword(password);
        factory.setVirtualHost(virtualHost);
        factory.setConnectionTimeout(5_000);
        return factory;
    }

    /** Work done with an AMQP channel. */
    @FunctionalInterface
    public interface ChannelWork<T> {
        T run(Channel channel) throws IOException, TimeoutException, InterruptedException;
    }
}
