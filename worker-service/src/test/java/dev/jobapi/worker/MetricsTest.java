package dev.jobapi.worker;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import dev.jobapi.common.testing.MetricTable;
import io.quarkus.test.junit.QuarkusTest;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.Test;

/** Every worker metric is served from start-up with its help text, exactly as the README's table lists it. */
@QuarkusTest
class MetricsTest {

    private static String scrape() {
        int port = ConfigProvider.getConfig().getValue("quarkus.management.test-port", Integer.class);
        return given().port(port)
                .get("/q/metrics")
                .then()
                .statusCode(200)
                .extract()
                .asString();
    }

    @Test
    void theReadmeTableIsWhatTheWorkerServes() {
        assertThat(MetricTable.documented("worker")).isNotEmpty();
        assertThat(MetricTable.served(scrape())).isEqualTo(MetricTable.documented("worker"));
    }

    @Test
    void everyConfiguredProvidersRareEventSeriesExistsBeforeItsFirstEvent() {
        // Other test classes share this application and may have counted some already: any value will do.
        assertThat(scrape())
                .containsPattern("(?m)^jobapi_winner_elections_lost_total\\{provider=\"fake-anthropic\"} \\d")
                .containsPattern("(?m)^jobapi_attempts_total\\{outcome=\"apply_refused\",provider=\"fake-b\"} \\d")
                .containsPattern("(?m)^jobapi_duplicate_applies_prevented_total \\d");
    }
}
