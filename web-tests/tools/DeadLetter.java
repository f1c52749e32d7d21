// Puts one attempt message into the dead-letter queue the way the broker itself does: published to
// a throw-away queue whose dead-letter exchange is jobs.attempts.dlx, taken off it and rejected, so
// the DLQ holds it with a real x-death header (reason "rejected"), exactly as a message the broker
// gave up on. Used by the console's browser test; run with `java -cp <amqp-client, slf4j-api> DeadLetter.java`.
//
//   java ... DeadLetter.java amqp://jobapi:jobapi@127.0.0.1:5672/jobapi ATTEMPT_ID JOB_ID

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import java.nio.charset.StandardCharsets;
import java.util.Map;

public class DeadLetter {
    public static void main(String[] args) throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setUri(args[0]);
        String body = "{\"attemptId\":\"" + args[1] + "\",\"jobId\":\"" + args[2] + "\"}";
        try (Connection connection = factory.newConnection("web-tests-dead-letter");
                Channel channel = connection.createChannel()) {
            String queue = channel.queueDeclare(
                            "", false, true, true, Map.of("x-dead-letter-exchange", "jobs.attempts.dlx"))
                    .getQueue();
            channel.confirmSelect();
            channel.basicPublish(
                    "",
                    queue,
                    true,
                    new AMQP.BasicProperties.Builder()
                            .contentType("application/json")
                            .deliveryMode(2)
                            .build(),
                    body.getBytes(StandardCharsets.UTF_8));
            channel.waitForConfirmsOrDie(10_000);
            GetResponse taken = channel.basicGet(queue, false);
            if (taken == null) throw new IllegalStateException("the message did not reach " + queue);
            channel.basicReject(taken.getEnvelope().getDeliveryTag(), false);
            channel.queueDelete(queue);
        }
        System.out.println(body);
    }
}
