package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.jobapi.common.testing.MetricTable;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

/** Every api metric is served from start-up with its help text, exactly as the README's table lists it. */
@QuarkusTest
class MetricsTest extends ApiTestSupport {

    @Test
    void theReadmeTableIsWhatTheApiServes() {
        String scrape =
                management().get("/q/metrics").then().statusCode(200).extract().asString();
        assertThat(MetricTable.documented("api")).isNotEmpty();
        assertThat(MetricTable.served(scrape)).isEqualTo(MetricTable.documented("api"));
    }

    @Test
    void rareEventCountersExistAtZeroBeforeTheirFirstEvent() {
        String scrape =
                management().get("/q/metrics").then().statusCode(200).extract().asString();
        // Other test classes share this application and may have counted some already: any value will do.
        assertThat(scrape)
                .containsPattern("(?m)^jobapi_review_required_refusals_total \\d")
                .containsPattern("(?m)^jobapi_dlq_replayed_total \\d")
                .containsPattern("(?m)^jobapi_idempotency_key_conflicts_total \\d");
    }
}
