package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.jobapi.common.fallback.KillSwitch;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * docs/design.md, rule 11, under concurrency: a decision that read the switch "on" (a fallback
 * being made in its transaction) and an operator turning it off cannot interleave. The flip waits
 * until the decision committed; every decision after the flip reads "off".
 */
@QuarkusTest
class KillSwitchRaceTest extends ApiTestSupport {

    @Inject
    KillSwitch killSwitch;

    @Test
    void turningTheSwitchOffWaitsForEveryDecisionThatReadItOn() throws Exception {
        String otto = Tokens.of("otto", "operator");
        CountDownLatch decided = new CountDownLatch(1);
        CountDownLatch commit = new CountDownLatch(1);
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            Future<Boolean> decision =
                    threads.submit(() -> QuarkusTransaction.requiringNew().call(() -> {
                        boolean on = killSwitch.state().enabled();
                        decided.countDown();
                        commit.await(10, TimeUnit.SECONDS); // the attempt is being written in this transaction
                        return on;
                    }));
            assertThat(decided.await(10, TimeUnit.SECONDS)).isTrue();
            Future<Integer> flip = threads.submit(() -> as(otto).contentType(ContentType.JSON)
                    .body("{\"enabled\":false,\"reason\":\"provider B returns garbage\"}")
                    .put("/admin/fallback")
                    .statusCode());
            // The flip waits for the decision that read the switch on, however long that stays open.
            await().during(Duration.ofMillis(1_500))
                    .atMost(Duration.ofSeconds(3))
                    .until(() -> !flip.isDone());

            commit.countDown();
            assertThat(decision.get(10, TimeUnit.SECONDS)).isTrue();
            assertThat(flip.get(10, TimeUnit.SECONDS)).isEqualTo(200);
            assertThat(QuarkusTransaction.requiringNew()
                            .call(() -> killSwitch.state().enabled()))
                    .isFalse();
        } finally {
            commit.countDown();
            threads.shutdownNow();
            execute("UPDATE fallback_switch SET enabled = true");
        }
    }
}
