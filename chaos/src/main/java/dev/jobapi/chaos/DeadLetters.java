package dev.jobapi.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/** The dead-letter queue as an operator lists it: {@code GET /admin/dlq}, page by page, consuming nothing. */
final class DeadLetters {

    private static final int PAGE = 100;

    private DeadLetters() {}

    private static String text(JsonNode item, String field) {
        return item.hasNonNull(field) ? item.get(field).asText() : null;
    }

    static List<Checker.DeadLetter> list(Api api, String operatorToken) throws IOException, InterruptedException {
        List<Checker.DeadLetter> letters = new ArrayList<>();
        for (int offset = 0; ; offset += PAGE) {
            Api.Answer page =
                    api.send(0, "GET", "/admin/dlq?offset=" + offset + "&limit=" + PAGE, operatorToken, null, null);
            if (!page.ok()) {
                throw new IllegalStateException("GET /admin/dlq -> " + page.status() + " " + page.body());
            }
            JsonNode items = page.body().path("items");
            for (JsonNode item : items) {
                letters.add(new Checker.DeadLetter(
                        item.path("id").asText(),
                        text(item, "attemptId"),
                        text(item, "jobId"),
                        text(item, "body"),
                        text(item, "reason")));
            }
            if (items.size() < PAGE) {
                return letters;
            }
        }
    }
}
