package dev.jobapi.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/** The dead-letter queue as an operator lists it: {@code GET /admin/dlq}, page by page, consuming nothing. */
final class DeadLetters {

    private static final int PAGE = 100;

    private DeadLetters() {}

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
                        item.hasNonNull("attemptId") ? item.get("attemptId").asText() : null));
            }
            if (items.size() < PAGE) {
                return letters;
            }
        }
    }
}
