package dev.jobapi.fakeprovider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Guards the demo: the fake provider's default answer must apply to the repository the project seeds. */
class DemoRepositoryTest {

    @Test
    void defaultAnswerAppliesToTheSeededDemoRepository(@TempDir Path repo) throws Exception {
        DemoRepository.writeTo(repo);
        run(repo, "git", "init", "-q");
        String answer;
        try (FakeProvider fake = FakeProvider.start(0)) {
            answer = defaultAnswer(fake);
        }
        Path patch = Files.writeString(repo.resolve("fix.patch"), answer, StandardCharsets.UTF_8);

        assertEquals(DemoRepository.defaultPatch(), answer);
        assertEquals("", run(repo, "git", "apply", "--check", patch.toString()));
        run(repo, "git", "apply", patch.toString());
        String fixed = Files.readString(repo.resolve("src/counter.py"));
        assertTrue(fixed.contains("    return len(items) - 1\n"), fixed);
    }

    @Test
    void writesEveryDemoFileUnderTheGivenDirectory(@TempDir Path dir) throws IOException {
        DemoRepository.writeTo(dir.resolve("nested"));

        for (Map.Entry<String, String> file : DemoRepository.files().entrySet()) {
            assertEquals(file.getValue(), Files.readString(dir.resolve("nested").resolve(file.getKey())));
        }
        assertTrue(DemoRepository.files().get("src/counter.py").contains("return len(items)\n"), "the bug is there");
    }

    private static String defaultAnswer(FakeProvider fake) throws Exception {
        String body = "{\"model\":\"gpt-test\",\"messages\":[{\"role\":\"user\",\"content\":\"fix last_index\"}]}";
        HttpResponse<String> response = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create(fake.baseUrl() + "/v1/chat/completions"))
                                .POST(HttpRequest.BodyPublishers.ofString(body))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        return new ObjectMapper()
                .readTree(response.body())
                .path("choices")
                .path(0)
                .path("message")
                .path("content")
                .asText();
    }

    /** Runs a command in {@code dir}, failing with its output unless it exits 0; returns its output. */
    private static String run(Path dir, String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(List.of(command))
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(30, TimeUnit.SECONDS), "timed out: " + String.join(" ", command));
        assertEquals(0, process.exitValue(), String.join(" ", command) + " failed:\n" + output);
        return output;
    }
}
