package dev.jobapi.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.jobapi.client.CollectedEvents;
import dev.jobapi.client.JobApiClient;
import dev.jobapi.client.model.NewJob;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A job's event stream across api processes (docs/design.md "Push"): two api processes, a worker
 * and the fake provider as the packaged jars. Streams are woken only by the job change notices
 * through RabbitMQ here (JOBAPI_STREAMS_REREAD is longer than any test), so an event committed by
 * the worker or through the other api process reaches a stream only if the fan-out works; and a
 * stream resumed by Last-Event-ID on the other process after its own was SIGKILLed gets every
 * event of the job exactly once, in order.
 */
class JobStreamIT {

    private static final Path ROOT =
            Path.of(System.getProperty("jobapi.root")).toAbsolutePath().normalize();
    private static final Map<String, String> NOTICES_ONLY = Map.of("JOBAPI_STREAMS_REREAD", "10m");

    private static RunningSystem system;
    private static RunningSystem.Service fake;
    private static RunningSystem.Service first;
    private static RunningSystem.Service second;

    @BeforeAll
    static void startTheSystem() throws Exception {
        system = new RunningSystem(ROOT, ROOT.resolve("system-tests/target/it-logs"));
        int firstPort = RunningSystem.freePort();
        fake = system.fakeProvider("http://127.0.0.1:" + firstPort);
        first = system.api("api-1", firstPort, NOTICES_ONLY);
        second = system.api("api-2", RunningSystem.freePort(), NOTICES_ONLY);
        system.worker("worker", fake);
    }

    @AfterAll
    static void stopTheSystem() {
        system.close();
    }

    @Test
    void eventsCommittedByTheWorkerAndThroughAnotherApiReachAStreamOnThisOne() throws Exception {
        String prompt = "cross-process " + UUID.randomUUID();
        scriptDelay(prompt, 3_000);
        UUID job = client(second).submit(job(prompt)).value().id();

        CollectedEvents stream = new CollectedEvents(client(first).streamEvents(job, null));
        await().atMost(Duration.ofSeconds(10)).until(() -> stream.kinds().contains("job.created"));
        assertThat(stream.kinds()).doesNotContain("job.completed");

        await().atMost(Duration.ofSeconds(60)).until(stream::ended);
        assertThat(stream.kinds()).endsWith("job.completed");
        assertThat(stream.cursors()).isEqualTo(feedCursorsOf(job));
    }

    @Test
    void aStreamResumedOnAnotherApiAfterItsOwnWasKilledGetsEveryEventOnceInOrder() throws Exception {
        String prompt = "killed-api " + UUID.randomUUID();
        scriptDelay(prompt, 8_000);
        UUID job = client(second).submit(job(prompt)).value().id();

        CollectedEvents beforeTheKill = new CollectedEvents(client(first).streamEvents(job, null));
        await().atMost(Duration.ofSeconds(10)).until(() -> beforeTheKill.kinds().contains("attempt.claimed"));
        first.kill();
        await().atMost(Duration.ofSeconds(10)).until(beforeTheKill::ended);
        List<String> received = beforeTheKill.cursors();
        assertThat(beforeTheKill.kinds()).doesNotContain("job.completed");

        CollectedEvents resumed =
                new CollectedEvents(client(second).streamEvents(job, received.get(received.size() - 1)));
        await().atMost(Duration.ofSeconds(60)).until(resumed::ended);

        List<String> everything = new ArrayList<>(received);
        everything.addAll(resumed.cursors());
        assertThat(resumed.kinds()).endsWith("job.completed");
        assertThat(everything).doesNotHaveDuplicates().isEqualTo(feedCursorsOf(job));
        first.restart();
    }

    private static NewJob job(String prompt) {
        return NewJob.prompt(prompt, "demo", "main").withProvider("fake-a");
    }

    /** Every event of the job as the feed lists them: the order both streams must have followed. */
    private static List<String> feedCursorsOf(UUID job) throws Exception {
        List<String> cursors = new ArrayList<>();
        String after = null;
        while (true) {
            var page = client(second).eventsAfter(after, 1000);
            page.events().stream()
                    .filter(event -> event.jobId().equals(job))
                    .forEach(event -> cursors.add(event.cursor()));
            if (page.events().isEmpty()) {
                return cursors;
            }
            after = page.next();
        }
    }

    private static void scriptDelay(String prompt, long delayMs) throws Exception {
        String script = "{\"match\":\"" + prompt + "\",\"steps\":[{\"delayMs\":" + delayMs + "}]}";
        HttpResponse<String> answer = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .build()
                .send(
                        HttpRequest.newBuilder(URI.create(fake.url() + "/fake/scripts"))
                                .header("Content-Type", "application/json")
                                .POST(HttpRequest.BodyPublishers.ofString(script))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertThat(answer.statusCode()).isEqualTo(201);
    }

    private static JobApiClient client(RunningSystem.Service api) throws Exception {
        return JobApiClient.builder(URI.create(api.url()))
                .token(system.token("stream-owner"))
                .build();
    }
}
