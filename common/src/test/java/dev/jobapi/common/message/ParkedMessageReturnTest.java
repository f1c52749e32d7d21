package dev.jobapi.common.message;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.MessageProperties;
import dev.jobapi.common.testing.PrivateRabbitMq;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/design.md, "The delay queue's return": a message that expires in the delay queue while the
 * work queue is gone (an operator deleted it; the services declare it again within seconds) finds no
 * queue and waits in the delay queue's dead-letter buffer. RabbitMQ sends it again only when its
 * dead-letter worker's resend timer fires: 180 s by default, which held six parked messages past the
 * soak's drain; 20 s with the broker settings the project deploys ({@link
 * PrivateRabbitMq#DEPLOYED_RABBIT_SETTINGS}). On a node of its own: the test deletes the work queue.
 */
class ParkedMessageReturnTest {

    private static final int PORT = 26702;
    private static final Pattern WAITING = Pattern.compile("\\{messages_dlx,(\\d+)}");

    @Test
    void aMessageParkedWhileTheWorkQueueWasGoneReturnsSoonAfterTheQueueIsBack() throws Exception {
        assumeTrue(PrivateRabbitMq.available(), "needs Debian's rabbitmq-server and root for a node of its own");
        try (PrivateRabbitMq node = new PrivateRabbitMq("jobapi-common-parked", PORT)) {
            node.start();
            ConnectionFactory factory = new ConnectionFactory();
            factory.setPort(PORT);
            factory.setUsername(PrivateRabbitMq.USER);
            factory.setPassword(PrivateRabbitMq.PASSWORD);
            byte[] body = "{\"parked\":\"while the work queue was gone\"}".getBytes(StandardCharsets.UTF_8);
            try (Connection connection = factory.newConnection();
                    Channel channel = connection.createChannel()) {
                AttemptTopology.declare(channel);
                channel.queueDelete(AttemptTopology.QUEUE);
                channel.confirmSelect();
                channel.basicPublish("", AttemptTopology.DELAY_QUEUE, MessageProperties.PERSISTENT_BASIC, body);
                channel.waitForConfirmsOrDie(10_000);

                await("the parked message expired and found no work queue")
                        .atMost(Duration.ofSeconds(30))
                        .pollInterval(Duration.ofSeconds(1))
                        .until(() -> waitingToBeDeadLettered(node) == 1);
                AttemptTopology.declare(channel);

                GetResponse returned = await("the parked message back in the work queue, declared again")
                        .atMost(Duration.ofSeconds(60))
                        .pollInterval(Duration.ofMillis(500))
                        .until(() -> channel.basicGet(AttemptTopology.QUEUE, true), Objects::nonNull);
                assertThat(returned.getBody()).isEqualTo(body);
            }
        }
    }

    @Test
    void everyBrokerTheProjectRunsHasTheSettingsThisTestRanWith() throws Exception {
        Path root = Path.of("..").toRealPath();
        for (String deployed : List.of("k8s/overlays/dev/rabbitmq.yaml", "k8s/overlays/prod/rabbitmq.yaml")) {
            assertThat(Files.readString(root.resolve(deployed)))
                    .as(deployed)
                    .contains("{rabbit, [" + PrivateRabbitMq.DEPLOYED_RABBIT_SETTINGS + "]}");
        }
        assertThat(Files.readString(root.resolve("chaos/run")))
                .as("the soak rigs' settings")
                .contains("MQ_RABBIT_SETTINGS='" + PrivateRabbitMq.DEPLOYED_RABBIT_SETTINGS + "'")
                .contains("'[{rabbit, [%s]}].\\n' \"$MQ_RABBIT_SETTINGS\"");
        assertThat(Files.readString(root.resolve("chaos/cluster.sh")))
                .as("the cluster rig's nodes")
                .contains("{rabbit, [%s]}].\\n' \"$MQC_NET_TICKTIME\" \"$MQ_RABBIT_SETTINGS\"");
    }

    /** The delay queue's messages that expired and wait for their dead-lettering to be confirmed. */
    private static long waitingToBeDeadLettered(PrivateRabbitMq node) {
        String printed = node.eval("rabbit_amqqueue:info(element(2, rabbit_amqqueue:lookup("
                + "rabbit_misc:r(<<\"/\">>, queue, <<\"" + AttemptTopology.DELAY_QUEUE + "\">>))),"
                + " [messages_dlx]).");
        Matcher count = WAITING.matcher(printed);
        if (!count.find()) {
            throw new IllegalStateException("no messages_dlx in: " + printed);
        }
        return Long.parseLong(count.group(1));
    }
}
