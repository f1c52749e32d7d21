package dev.jobapi.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The dead letters as an operator lists them: {@code GET /admin/dlq}, the pending rows the api's
 * dead-letter mover stored, page by page with the keyset cursor ({@code after}).
 */
final class DeadLetters {

    private static final int PAGE = 100;

    private DeadLetters() {}

    private static String text(JsonNode item, String field) {
        return item.hasNonNull(field) ? item.get(field).asText() : null;
    }

    static List<Checker.DeadLetter> list(Api api, String operatorToken) throws IOException, InterruptedException {
        List<Checker.DeadLetter> letters = new ArrayList<>();
        String after = "0";
        while (true) {
            Api.Answer page =
                    api.send(0, "GET", "/admin/dlq?after=" + after + "&limit=" + PAGE, operatorToken, null, null);
            if (!page.ok()) {
                throw new IllegalStateException("GET /admin/dlq -> " + page.status() + " " + page.body());
            }
            for (JsonNode item : page.body().path("items")) {
                letters.add(new Checker.DeadLetter(
                        item.path("id").asText(),
                        text(item, "attemptId"),
                        text(item, "jobId"),
                        text(item, "body"),
                        text(item, "reason")));
            }
            after = text(page.body(), "next");
            if (after == null) {
                return letters;
            }
        }
    }
}
