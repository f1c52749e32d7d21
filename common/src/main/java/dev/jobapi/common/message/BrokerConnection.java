package dev.jobapi.common.message;

import com.rabbitmq.client.Address;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeoutException;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * The process's AMQP connection: declaring the topology, probing the broker, publishing with
 * confirms, and the consumers' connections of their own.
 *
 * <p>A cluster is reached through an address list ({@code rabbitmq-addresses}, {@code host:port}
 * separated by commas; else {@code rabbitmq-host} and {@code rabbitmq-port}): a connection tries the
 * nodes in turn, so losing one node costs one reconnect. Every connection negotiates a short AMQP
 * heartbeat, so a node that stops answering without closing its sockets (frozen, partitioned) is
 * noticed within two heartbeats instead of the broker's default of a minute, and every channel
 * operation is bounded ({@link #CHANNEL_RPC_TIMEOUT_MS}), so no thread waits on a silent node.
 *
 * <p>The shared connection does not recover by itself: it is replaced (the old one aborted) the
 * first time it is found closed, so there is never more than one per process. Publishing channels
 * are kept open in confirm mode and reused; a channel that failed is closed, never reused.
 */
@ApplicationScoped
public class BrokerConnection {

    private static final Logger LOG = Logger.getLogger(BrokerConnection.class);

    /** Seconds between AMQP heartbeats; a peer silent for two of them is taken for gone. */
    static final int HEARTBEAT_SECONDS = 5;

    /** The longest a channel operation (declare, cancel, close) may wait for the broker. */
    static final int CHANNEL_RPC_TIMEOUT_MS = 10_000;

    private static final int CONNECTION_TIMEOUT_MS = 5_000;

    /** Publishing channels kept open beyond this many are closed after use. */
    private static final int KEPT_PUBLISHING_CHANNELS = 8;

    @ConfigProperty(name = "rabbitmq-addresses")
    Optional<String> addressList;

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
    private final Deque<Channel> publishingChannels = new ConcurrentLinkedDeque<>();

    /**
     * Declares the topology before the services start their loops. A broker that is away does not
     * stop the process: intake writes to the outbox, the relay publishes once the broker is back,
     * and every publish and subscription declares the topology again first.
     */
    void declareOnStartup(@Observes @Priority(10) StartupEvent event) {
        try {
            declareTopology();
        } catch (RuntimeException brokerAway) {
            LOG.warnf(
                    "RabbitMQ is not reachable at start (%s); starting anyway, the topology is declared on the first publish",
                    brokerAway.toString());
        }
    }

    void registerGauge(@Observes StartupEvent event, MeterRegistry registry) {
        Gauge.builder("jobapi.broker.connected", this, broker -> broker.connected() ? 1 : 0)
                .description("1 while this process holds an open AMQP connection to RabbitMQ, else 0")
                .strongReference(true) // the gauge keeps its bean; a weak one was seen to vanish from a scrape
                .register(registry);
    }

    void close(@Observes ShutdownEvent event) {
        synchronized (this) {
            if (connection != null && connection.isOpen()) {
                try {
                    connection.close(CHANNEL_RPC_TIMEOUT_MS);
                } catch (IOException | RuntimeException e) {
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

    /** Whether the shared connection is open now (a metric and the broker health group read it). */
    public synchronized boolean connected() {
        return connection != null && connection.isOpen();
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

    /**
     * Runs work on a publishing channel in confirm mode, taken from those kept open (or opened). The
     * work has the channel alone until it returns; a channel whose work failed is closed, since its
     * confirms and listeners can no longer be trusted.
     */
    <T> T withPublishingChannel(ChannelWork<T> work) {
        Channel channel = null;
        boolean healthy = false;
        try {
            channel = publishingChannel();
            T result = work.run(channel);
            healthy = true;
            return result;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (TimeoutException e) {
            throw new UncheckedIOException(new IOException("RabbitMQ did not answer in time", e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while talking to RabbitMQ", e);
        } finally {
            if (channel != null) {
                if (healthy && channel.isOpen() && publishingChannels.size() < KEPT_PUBLISHING_CHANNELS) {
                    publishingChannels.push(channel);
                } else {
                    closeQuietly(channel);
                }
            }
        }
    }

    private Channel publishingChannel() throws IOException, TimeoutException {
        Connection current = connection();
        Channel kept;
        while ((kept = publishingChannels.poll()) != null) {
            if (kept.isOpen() && kept.getConnection() == current) {
                return kept;
            }
            closeQuietly(kept);
        }
        Channel channel = current.createChannel();
        channel.confirmSelect();
        return channel;
    }

    private static void closeQuietly(Channel channel) {
        try {
            if (channel.isOpen()) {
                channel.abort();
            }
        } catch (IOException | RuntimeException e) {
            LOG.debugf("Closing a channel failed: %s", e);
        }
    }

    private synchronized Connection connection() throws IOException, TimeoutException {
        if (connection == null || !connection.isOpen()) {
            if (connection != null) {
                connection.abort(CHANNEL_RPC_TIMEOUT_MS); // closed already; frees its socket and threads
            }
            ConnectionFactory factory = factory();
            // Replaced here when found closed rather than recovered in the background: a recovering
            // connection looks closed, and replacing it would leak one connection per broker loss.
            factory.setAutomaticRecoveryEnabled(false);
            connection = factory.newConnection(addresses(), "jobapi-broker-connection");
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
            return factory.newConnection(addresses(), name);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (TimeoutException e) {
            throw new UncheckedIOException(new IOException("RabbitMQ did not answer in time", e));
        }
    }

    /** The nodes to try, in the order configured. */
    List<Address> addresses() {
        return addressList
                .filter(list -> !list.isBlank())
                .map(list -> Arrays.asList(Address.parseAddresses(list)))
                .orElseGet(() -> List.of(new Address(host, port)));
    }

    private ConnectionFactory factory() {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setUsername(username);
        factory.setPassword(password);
        factory.setVirtualHost(virtualHost);
        factory.setConnectionTimeout(CONNECTION_TIMEOUT_MS);
        factory.setHandshakeTimeout(CONNECTION_TIMEOUT_MS);
        factory.setRequestedHeartbeat(HEARTBEAT_SECONDS);
        factory.setChannelRpcTimeout(CHANNEL_RPC_TIMEOUT_MS);
        factory.setShutdownTimeout(CHANNEL_RPC_TIMEOUT_MS);
        factory.setClientProperties(withProcessIdentity(factory.getClientProperties()));
        return factory;
    }

    /**
     * The client's properties plus the process holding the connection ({@code process_host}: the pod's
     * name in Kubernetes; {@code process_pid}), so the broker's connection list ties each connection to
     * one process: an operator reads it during an incident, and the clustered soak counts connections
     * per process with it.
     */
    static Map<String, Object> withProcessIdentity(Map<String, Object> clientProperties) {
        Map<String, Object> properties = new HashMap<>(clientProperties);
        properties.put(
                "process_host", Optional.ofNullable(System.getenv("HOSTNAME")).orElse("unknown"));
        properties.put("process_pid", Long.toString(ProcessHandle.current().pid()));
        return properties;
    }

    /** Work done with an AMQP channel. */
    @FunctionalInterface
    public interface ChannelWork<T> {
        T run(Channel channel) throws IOException, TimeoutException, InterruptedException;
    }
}
