package dev.jobapi.common.testing;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.util.Map;

/**
 * Points the application under test at a {@link PrivateRabbitMq} node of its own, started before the
 * application and stopped after it. Use it restricted to the test class that disturbs the broker,
 * with a name and port of its own ({@code initArgs}: {@code name}, {@code port}); the test reaches
 * the node through {@link #node()}.
 */
public class PrivateRabbitMqResource implements QuarkusTestResourceLifecycleManager {

    private static PrivateRabbitMq node;

    private String name = "jobapi-test";
    private int port = 26672;

    @Override
    public void init(Map<String, String> initArgs) {
        name = initArgs.getOrDefault("name", name);
        port = Integer.parseInt(initArgs.getOrDefault("port", String.valueOf(port)));
    }

    @Override
    public Map<String, String> start() {
        if (!PrivateRabbitMq.available()) {
            // The test class assumes availability and is skipped; the application still needs a broker.
            return Map.of();
        }
        node = new PrivateRabbitMq(name, port);
        node.start();
        // The address list names a port nobody listens on before the node's, as a cluster's list
        // names a node that is down: a connection must go on to the next. Host and port name the
        // refusing one, so an application that ignored the list would not reach the broker at all.
        int nobody = port - 1;
        return Map.of(
                "rabbitmq-host",
                "127.0.0.1",
                "rabbitmq-port",
                String.valueOf(nobody),
                "rabbitmq-addresses",
                "127.0.0.1:" + nobody + ",127.0.0.1:" + port,
                "rabbitmq-virtual-host",
                "/",
                "rabbitmq-username",
                PrivateRabbitMq.USER,
                "rabbitmq-password",
                PrivateRabbitMq.PASSWORD);
    }

    @Override
    public void stop() {
        if (node != null) {
            node.close();
            node = null;
        }
    }

    /** The node the application under test talks to. */
    public static PrivateRabbitMq node() {
        return node;
    }
}
