package dev.jobapi.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.X509EncodedKeySpec;
import java.util.ArrayDeque;
import java.util.Base64;
import java.util.Deque;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** jobctl's commands, output and exit codes, against a scripted api. */
class JobctlTest {

    private static final String JOB_ID = "0b6f1c2e-0000-4000-8000-000000000001";
    private static final String ATTEMPT_ID = "0b6f1c2e-0000-4000-8000-0000000000a1";

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();
    private final Deque<String[]> script = new ArrayDeque<>();
    private final java.util.List<String> requests = new java.util.ArrayList<>();
    private HttpServer api;

    @AfterEach
    void stop() {
        if (api != null) {
            api.stop(0);
        }
    }

    private int run(String... args) {
        var commandLine = Jobctl.commandLine();
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(err, true));
        return commandLine.execute(args);
    }

    /** Each request takes the next {status, body}; the last one repeats. */
    private String api(String[]... answers) throws IOException {
        script.addAll(java.util.List.of(answers));
        api = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        api.createContext("/", exchange -> {
            byte[] request = exchange.getRequestBody().readAllBytes();
            synchronized (requests) {
                requests.add(exchange.getRequestMethod() + " " + exchange.getRequestURI() + " "
                        + new String(request, StandardCharsets.UTF_8));
            }
            String[] answer;
            synchronized (script) {
                answer = script.size() > 1 ? script.pollFirst() : script.peekFirst();
            }
            byte[] body = answer[1].getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(Integer.parseInt(answer[0]), body.length);
            try (OutputStream o = exchange.getResponseBody()) {
                o.write(body);
            }
        });
        api.start();
        return "--url=http://127.0.0.1:" + api.getAddress().getPort();
    }

    private static String[] job(int status, String state, int version) {
        String winner = "completed".equals(state) ? "\"" + ATTEMPT_ID + "\"" : "null";
        String attemptState = "completed".equals(state) ? "succeeded" : "starting";
        return new String[] {
            String.valueOf(status),
            "{\"id\":\"" + JOB_ID + "\",\"state\":\"" + state + "\",\"idempotencyKey\":\"k\",\"version\":" + version
                    + ",\"winningAttemptId\":" + winner + ",\"attempts\":[{\"id\":\"" + ATTEMPT_ID + "\",\"jobId\":\""
                    + JOB_ID + "\",\"provider\":\"fake-a\",\"state\":\"" + attemptState + "\"}],\"actions\":[]}"
        };
    }

    @Test
    void tokenIsSignedWithTheDevelopmentKeyAndCarriesTheClaimsTheApiChecks() throws Exception {
        assertThat(run("token", "--sub", "alice", "--groups", "user, reviewer", "--ttl", "600"))
                .isZero();

        String[] parts = out.toString().strip().split("\\.");
        Signature rs256 = Signature.getInstance("SHA256withRSA");
        rs256.initVerify(developmentPublicKey());
        rs256.update((parts[0] + "." + parts[1]).getBytes(StandardCharsets.US_ASCII));
        assertThat(rs256.verify(Base64.getUrlDecoder().decode(parts[2]))).isTrue();
        JsonNode header = new ObjectMapper().readTree(Base64.getUrlDecoder().decode(parts[0]));
        JsonNode claims = new ObjectMapper().readTree(Base64.getUrlDecoder().decode(parts[1]));
        assertThat(header.get("alg").asText()).isEqualTo("RS256");
        assertThat(claims.get("iss").asText()).isEqualTo("jobapi-dev");
        assertThat(claims.get("aud").asText()).isEqualTo("jobapi");
        assertThat(claims.get("sub").asText()).isEqualTo("alice");
        assertThat(claims.get("upn").asText()).isEqualTo("alice");
        assertThat(claims.get("groups")).hasSize(2);
        assertThat(claims.get("groups").get(1).asText()).isEqualTo("reviewer");
        assertThat(claims.get("exp").asLong() - claims.get("iat").asLong()).isEqualTo(600);
        assertThat(claims.get("jti").asText()).isNotBlank();
    }

    @Test
    void aTokenLongerLivedThanTheApiAcceptsIsAUsageError() {
        assertThat(run("token", "--sub", "alice", "--ttl", "43201")).isEqualTo(ExitCodes.USAGE);
        assertThat(run("token", "--sub", "")).isEqualTo(ExitCodes.USAGE);
        assertThat(run("token", "--sub", "al\u0007ice")).isEqualTo(ExitCodes.USAGE);
        assertThat(run("token")).isEqualTo(ExitCodes.USAGE);
    }

    @Test
    void submitPrintsTheJobAndTheKeyItUsed() throws IOException {
        String url = api(job(201, "accepted", 0));

        assertThat(run("submit", url, "--prompt", "fix it", "--key", "order-7")).isZero();

        assertThat(out.toString()).contains("job " + JOB_ID + " accepted (created)", "key order-7");
    }

    @Test
    void submitWithATimeToLiveSendsItAsTheJobsDeadline() throws IOException {
        String url = api(job(201, "accepted", 0));

        assertThat(run("submit", url, "--prompt", "fix it", "--ttl", "600")).isZero();

        assertThat(requests)
                .singleElement()
                .asString()
                .startsWith("POST /jobs ")
                .contains("\"ttlSeconds\":600");
    }

    @Test
    void providersPauseSendsTheReasonAndSaysWhoPausedIt() throws IOException {
        String url = api(new String[] {
            "200",
            "{\"provider\":\"fake-a\",\"paused\":true,\"pause\":{\"provider\":\"fake-a\",\"pausedBy\":\"otto\","
                    + "\"pausedAt\":\"2026-12-03T14:00:00Z\",\"reason\":\"outage\"},\"reannounced\":0}"
        });

        assertThat(run("providers", url, "pause", "fake-a", "--reason", "outage"))
                .isZero();

        assertThat(requests)
                .singleElement()
                .asString()
                .isEqualTo("POST /admin/providers/fake-a/pause {\"reason\":\"outage\"}");
        assertThat(out.toString()).contains("fake-a paused by otto at 2026-12-03T14:00:00Z: outage");
        assertThat(run("providers", "pause", "fake-a")).isEqualTo(ExitCodes.USAGE);
    }

    @Test
    void providersListShowsAnOpenBreakersProbeTimeAndAHalfOpenOnesProbes() throws IOException {
        String health = "\"windowCalls\":20,\"windowFaults\":12,\"openedAt\":\"2026-12-05T07:00:00Z\","
                + "\"lastFault\":\"provider answered 503\",\"limitedUntil\":null,\"limitReason\":null,\"open\":false";
        String url = api(new String[] {
            "200",
            "[{\"name\":\"fake-a\",\"accepted\":true,\"health\":{\"provider\":\"fake-a\",\"breaker\":\"open\","
                    + health + ",\"retryAt\":\"2026-12-05T07:00:15Z\",\"probeCalls\":0,\"probeFaults\":0,"
                    + "\"probesUnderWay\":0}},"
                    + "{\"name\":\"fake-b\",\"accepted\":true,\"health\":{\"provider\":\"fake-b\","
                    + "\"breaker\":\"half_open\"," + health + ",\"retryAt\":\"2026-12-05T07:00:15Z\","
                    + "\"probeCalls\":2,\"probeFaults\":1,\"probesUnderWay\":3}}]"
        });

        assertThat(run("providers", url, "list")).isZero();

        assertThat(out.toString())
                .contains(
                        "BREAKER OPEN since 2026-12-05T07:00:00Z, probes at 2026-12-05T07:00:15Z: provider answered 503")
                .contains("BREAKER HALF_OPEN since 2026-12-05T07:00:00Z, probes: 2 counted (1 faults), 3 under way:"
                        + " provider answered 503");
    }

    @Test
    void webhooksAddSendsTheUrlAndEventsAndPrintsTheSecretOnce() throws IOException {
        String url = api(new String[] {
            "201",
            "{\"id\":\"" + JOB_ID + "\",\"url\":\"https://hooks.example.com/in\",\"events\":[\"job.completed\"],"
                    + "\"description\":null,\"createdAt\":\"2026-12-04T10:00:00Z\",\"disabledReason\":null,"
                    + "\"previousSecretExpiresAt\":null,\"secret\":\"whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0\"}"
        });

        assertThat(run("webhooks", url, "add", "https://hooks.example.com/in", "--event", "job.completed"))
                .isZero();

        assertThat(requests)
                .singleElement()
                .asString()
                .isEqualTo("POST /webhooks {\"events\":[\"job.completed\"],\"url\":\"https://hooks.example.com/in\"}");
        assertThat(out.toString())
                .contains(JOB_ID + "  https://hooks.example.com/in  job.completed")
                .contains("secret whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0");
    }

    @Test
    void webhooksDeliveriesListsTheLogAndAProblemExitsOne() throws IOException {
        String url = api(
                new String[] {
                    "200",
                    "{\"deliveries\":[{\"webhookId\":\"msg_0123456789abcdef0123456789abcdef\",\"type\":\"job.completed\","
                            + "\"jobId\":\"" + JOB_ID + "\",\"eventId\":7,\"state\":\"failed\",\"attempts\":9,"
                            + "\"createdAt\":\"2026-12-04T10:00:00Z\",\"lastAttemptAt\":null,\"lastStatus\":500,"
                            + "\"lastError\":\"answered 500\",\"nextAttemptAt\":null,\"deliveredAt\":null}]}"
                },
                new String[] {
                    "409",
                    "{\"status\":409,\"code\":\"webhook-delivery-not-failed\",\"title\":\"t\","
                            + "\"detail\":\"The delivery is delivered; only a failed one can be retried.\"}"
                });

        assertThat(run("webhooks", url, "deliveries", JOB_ID, "--state", "failed"))
                .isZero();
        assertThat(out.toString())
                .contains("msg_0123456789abcdef0123456789abcdef  job.completed  failed  tries=9  job=" + JOB_ID
                        + "  last: answered 500");
        assertThat(requests.get(0)).startsWith("GET /webhooks/" + JOB_ID + "/deliveries?limit=50&state=failed");

        assertThat(run("webhooks", url, "retry", JOB_ID, "msg_0123456789abcdef0123456789abcdef"))
                .isEqualTo(ExitCodes.REFUSED);
        assertThat(err.toString()).contains("409 webhook-delivery-not-failed");
    }

    @Test
    void ownersSetSendsTheWeightAndCapAndSaysWhatIsInForce() throws IOException {
        String url = api(new String[] {
            "200",
            "{\"owner\":\"alice\",\"weight\":3,\"maxInFlight\":4,\"setBy\":\"otto\",\"reason\":\"team\","
                    + "\"updatedAt\":\"2026-12-04T10:00:00Z\"}"
        });

        assertThat(run("owners", url, "set", "alice", "--weight", "3", "--max-in-flight", "4", "--reason", "team"))
                .isZero();

        assertThat(requests)
                .singleElement()
                .asString()
                .isEqualTo("PUT /admin/owners/alice/share {\"maxInFlight\":4,\"reason\":\"team\",\"weight\":3}");
        assertThat(out.toString()).contains("alice: weight 3, calls in flight at most 4 (otto: team)");
    }

    @Test
    void budgetsSetSendsTheLimitAndSaysWhereTheBudgetStands() throws IOException {
        String url = api(new String[] {
            "200",
            "{\"period\":\"day\",\"periodStartsOn\":\"2026-12-04\",\"limitUsd\":25.000000,\"softPercent\":80,"
                    + "\"defaultBudget\":false,\"spentUsd\":21.500000,\"reservedUsd\":0.250000,"
                    + "\"remainingUsd\":3.250000,\"pastSoftThreshold\":true}"
        });

        assertThat(run("budgets", url, "set", "alice", "day", "--limit-usd", "25", "--reason", "trial"))
                .isZero();

        assertThat(requests)
                .singleElement()
                .asString()
                .isEqualTo("PUT /admin/budgets/alice/day {\"limitUsd\":25,\"reason\":\"trial\"}");
        assertThat(out.toString())
                .contains("alice day from 2026-12-04: limit 25.000000 USD, spent 21.500000, reserved 0.250000,"
                        + " left 3.250000  PAST 80%");
        assertThat(run("budgets", url, "set", "alice", "day", "--reason", "no limit"))
                .isEqualTo(ExitCodes.USAGE);
    }

    @Test
    void aBudgetOfOneProviderIsSetShownWithItsProviderAndRemoved() throws IOException {
        String ofFakeA = "{\"period\":\"day\",\"provider\":\"fake-a\",\"periodStartsOn\":\"2026-12-04\","
                + "\"limitUsd\":5.000000,\"softPercent\":80,\"defaultBudget\":false,\"spentUsd\":1.000000,"
                + "\"reservedUsd\":0.000000,\"remainingUsd\":4.000000,\"pastSoftThreshold\":false}";
        String ofEvery = ofFakeA.replace("\"fake-a\"", "null");
        String url = api(
                new String[] {"200", ofFakeA},
                new String[] {"200", "{\"ownerId\":\"alice\",\"budgets\":[" + ofEvery + "," + ofFakeA + "]}"},
                new String[] {"204", ""});

        assertThat(run(
                        "budgets",
                        url,
                        "set",
                        "alice",
                        "day",
                        "--provider",
                        "fake-a",
                        "--limit-usd",
                        "5",
                        "--reason",
                        "dear"))
                .isZero();
        assertThat(run("budgets", url, "show", "alice")).isZero();
        assertThat(run("budgets", url, "remove", "alice", "day", "--provider", "fake-a", "--reason", "contract ended"))
                .isZero();

        assertThat(requests)
                .containsExactly(
                        "PUT /admin/budgets/alice/day?provider=fake-a {\"limitUsd\":5,\"reason\":\"dear\"}",
                        "GET /admin/budgets/alice ",
                        "DELETE /admin/budgets/alice/day?provider=fake-a&reason=contract+ended ");
        assertThat(out.toString())
                .contains("alice day for fake-a from 2026-12-04: limit 5.000000 USD, spent 1.000000")
                .contains("alice day from 2026-12-04: limit 5.000000 USD")
                .contains("alice's day budget for fake-a removed");
    }

    @Test
    void pricesListPrintsEachModelOrOneJsonDocument() throws IOException {
        String url = api(new String[] {
            "200",
            "[{\"id\":7,\"provider\":\"fake-a\",\"model\":\"fake-a\",\"inputUsdPerMillionTokens\":3.000000,"
                    + "\"outputUsdPerMillionTokens\":15.000000,\"effectiveFrom\":\"2026-12-04T01:00:00Z\","
                    + "\"setBy\":\"otto\",\"reason\":\"list price\"}]"
        });

        assertThat(run("prices", url, "list")).isZero();
        assertThat(out.toString())
                .contains("fake-a fake-a: 3.000000 USD in, 15.000000 USD out per million tokens, from"
                        + " 2026-12-04T01:00:00Z (otto: list price)");

        out.getBuffer().setLength(0);
        assertThat(run("prices", url, "list", "-o", "json")).isZero();
        assertThat(out.toString().strip()).startsWith("[").endsWith("]").contains("inputUsdPerMillionTokens");
    }

    @Test
    void submitWaitFollowsTheJobUntilItCompletes() throws IOException {
        String url = api(job(201, "accepted", 0), job(200, "running", 1), job(200, "completed", 2));

        assertThat(run("submit", url, "--prompt", "fix it", "--wait")).isZero();

        assertThat(err.toString()).contains("running", "completed");
        assertThat(out.toString()).contains("job " + JOB_ID + " completed by attempt " + ATTEMPT_ID + " (fake-a)");
    }

    @Test
    void waitingOnAJobThatIsCancelledExitsWithFive() throws IOException {
        String url = api(job(200, "cancelled", 3));

        assertThat(run("jobs", "wait", JOB_ID, url)).isEqualTo(ExitCodes.UNSUCCESSFUL);
    }

    @Test
    void aProblemIsPrintedWithItsCodeAndExitsWithOne() throws IOException {
        String url = api(new String[] {
            "409",
            "{\"status\":409,\"code\":\"review-required\",\"title\":\"t\",\"detail\":\"an attempt is unknown\","
                    + "\"requestId\":\"req-42\"}"
        });

        assertThat(run("attempt", JOB_ID, "--provider", "fake-b", url)).isEqualTo(ExitCodes.REFUSED);

        assertThat(err.toString()).contains("409 review-required: an attempt is unknown", "request id req-42");
    }

    @Test
    void textTheServerRelaysCannotDriveTheTerminal() throws IOException {
        String url = api(new String[] {
            "409",
            "{\"status\":409,\"code\":\"review-required\",\"title\":\"t\",\"detail\":\"\\u001b[2J\\u001b]0;owned\\u0007"
                    + "gone\\rfake\\u0085 \\u202eslif\"}"
        });

        assertThat(run("attempt", JOB_ID, "--provider", "fake-b", url)).isEqualTo(ExitCodes.REFUSED);

        assertThat(err.toString())
                .contains("\\u001b[2J\\u001b]0;owned\\u0007gone\\u000dfake\\u0085 \\u202eslif")
                .doesNotContain("\u001b", "\r", "\u0007", "\u0085", "\u202e");
    }

    @Test
    void aTokenSentOverPlainHttpToAnotherMachineIsWarnedAboutAndToThisOneIsNot() throws IOException {
        assertThat(Jobctl.sendsTokensInClearText(java.net.URI.create("http://10.0.0.5:8080")))
                .isTrue();
        assertThat(Jobctl.sendsTokensInClearText(java.net.URI.create("http://api.example")))
                .isTrue();
        assertThat(Jobctl.sendsTokensInClearText(java.net.URI.create("http://127.0.0.1.example")))
                .isTrue();
        assertThat(Jobctl.sendsTokensInClearText(java.net.URI.create("https://api.example")))
                .isFalse();
        assertThat(Jobctl.sendsTokensInClearText(java.net.URI.create("http://localhost:8080")))
                .isFalse();
        assertThat(Jobctl.sendsTokensInClearText(java.net.URI.create("http://127.0.0.1:8080")))
                .isFalse();
        assertThat(Jobctl.sendsTokensInClearText(java.net.URI.create("http://[::1]:8080")))
                .isFalse();

        String url = api(job(200, "cancelled", 3));
        run("cancel", JOB_ID, url);
        assertThat(err.toString()).doesNotContain("warning");
    }

    @Test
    void aCommandSendingItsTokenOverPlainHttpToAnotherAddressSaysSoFirst() throws IOException {
        // This machine's own non-loopback address: not loopback to jobctl, and a closed port answers at once.
        java.util.Optional<InetAddress> own =
                java.util.Collections.list(java.net.NetworkInterface.getNetworkInterfaces()).stream()
                        .flatMap(nic -> java.util.Collections.list(nic.getInetAddresses()).stream())
                        .filter(address -> address instanceof java.net.Inet4Address && !address.isLoopbackAddress())
                        .findFirst();
        org.junit.jupiter.api.Assumptions.assumeTrue(own.isPresent(), "this machine has a non-loopback address");
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }

        run("cancel", JOB_ID, "--url=http://" + own.get().getHostAddress() + ":" + closedPort);

        assertThat(err.toString())
                .startsWith("jobctl: warning: sending a bearer token over plain http to "
                        + own.get().getHostAddress());
    }

    @Test
    void noAnswerExitsWithThreeAndSaysTheKeyIsKept(@org.junit.jupiter.api.io.TempDir Path state) throws IOException {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }

        int exit = run("cancel", JOB_ID, "--url=http://127.0.0.1:" + closedPort);

        assertThat(exit).isEqualTo(ExitCodes.UNREACHABLE);
        assertThat(err.toString()).contains("no answer").containsPattern("last request [0-9a-f-]{36}");
    }

    @Test
    void completionPrintsABashCompletionScript() {
        assertThat(run("completion")).isZero();

        assertThat(out.toString()).contains("complete -F _complete_jobctl", "submit", "providers");
    }

    @Test
    void everyCommandAndSubcommandAnswersHelpWithExitZero() {
        java.util.List<java.util.List<String>> paths = new java.util.ArrayList<>();
        commands(Jobctl.commandLine(), new java.util.ArrayList<>(), paths);
        assertThat(paths).hasSizeGreaterThan(25);
        for (java.util.List<String> path : paths) {
            out.getBuffer().setLength(0);
            java.util.List<String> args = new java.util.ArrayList<>(path);
            args.add("--help");
            assertThat(run(args.toArray(String[]::new)))
                    .as("jobctl %s --help", String.join(" ", path))
                    .isZero();
            assertThat(out.toString())
                    .as("jobctl %s --help", String.join(" ", path))
                    .contains("Usage: jobctl");
        }
    }

    /** Every command's path below this one: jobctl's own tree, as picocli built it. */
    private static void commands(
            picocli.CommandLine command, java.util.List<String> path, java.util.List<java.util.List<String>> paths) {
        paths.add(path);
        command.getSubcommands().forEach((name, sub) -> {
            if (!name.equals("help") && sub.getCommandName().equals(name)) {
                java.util.List<String> longer = new java.util.ArrayList<>(path);
                longer.add(name);
                commands(sub, longer, paths);
            }
        });
    }

    @Test
    void jobsEventsPrintsEachStreamedEventAndExitsWithTheJobsEnd() throws Exception {
        String created = "{\"cursor\":\"7-1\",\"jobId\":\"" + JOB_ID + "\",\"id\":1,\"at\":\"2026-12-04T10:00:00Z\","
                + "\"kind\":\"job.created\",\"attemptId\":null,\"detail\":\"by alice\"}";
        String stream = ": keep-alive\n\nid: 7-1\nevent: job.created\ndata: " + created + "\n\n";
        String url = api(new String[] {"200", stream}, job(200, "completed", 3));

        assertThat(run("jobs", "events", JOB_ID, url)).isZero();
        assertThat(out.toString()).contains("job.created").contains("by alice");
        assertThat(requests.get(0)).startsWith("GET /jobs/" + JOB_ID + "/events");

        api.stop(0);
        out.getBuffer().setLength(0);
        requests.clear();
        script.clear();
        url = api(new String[] {"200", stream}, job(200, "cancelled", 3));
        assertThat(run("jobs", "events", JOB_ID, "-o", "json", url)).isEqualTo(ExitCodes.UNSUCCESSFUL);
        JsonNode line = new ObjectMapper().readTree(out.toString().strip());
        assertThat(line.get("cursor").asText()).isEqualTo("7-1");
        assertThat(line.get("kind").asText()).isEqualTo("job.created");
    }

    @Test
    void everyListingPrintsOneJsonDocumentWithDashOJson() throws Exception {
        String bulk = "{\"id\":\"7\",\"action\":\"dlq-replay\",\"state\":\"done\",\"total\":2,\"processed\":2,"
                + "\"done\":2,\"skipped\":0,\"refused\":0,\"refusals\":[]}";
        String[][] listings = {
            {"{\"items\":[],\"nextCursor\":null}", "jobs", "list"},
            {"[]", "jobs", "timeline", JOB_ID},
            {"[]", "quarantine"},
            {"[]", "providers", "list"},
            {"{\"items\":[],\"depth\":0,\"offset\":0,\"limit\":50,\"next\":null}", "dlq", "list"},
            {"{\"count\":3}", "dlq", "count"},
            {"[" + bulk + "]", "bulk", "list"},
            {bulk, "bulk", "show", "7"}
        };
        for (String[] listing : listings) {
            String url = api(new String[] {"200", listing[0]});
            out.getBuffer().setLength(0);
            java.util.List<String> args =
                    new java.util.ArrayList<>(java.util.List.of(listing).subList(1, listing.length));
            args.addAll(java.util.List.of("-o", "json", url));
            assertThat(run(args.toArray(String[]::new)))
                    .as(String.join(" ", args))
                    .isZero();
            JsonNode parsed = new ObjectMapper().readTree(out.toString());
            assertThat(parsed).as(String.join(" ", args)).isNotNull();
            assertThat(parsed.isContainerNode()).isTrue();
            api.stop(0);
            api = null;
            script.clear();
        }
        assertThat(run("dlq", "count", "-o", "yaml")).isEqualTo(ExitCodes.USAGE);
    }

    @Test
    void bulkRunShowsTheDryRunsCountExecutesWithItsTokenAndFollowsTheProgress() throws IOException {
        String url = api(
                new String[] {
                    "200",
                    "{\"action\":\"dlq-replay\",\"filter\":{\"provider\":\"fake-b\"},\"count\":3,"
                            + "\"sample\":[{\"id\":\"11\",\"provider\":\"fake-b\",\"state\":\"pending\"}],"
                            + "\"token\":\"the-token\"}"
                },
                new String[] {"202", "{\"id\":\"7\",\"state\":\"running\",\"total\":3,\"processed\":1}"},
                new String[] {
                    "200",
                    "{\"id\":\"7\",\"action\":\"dlq-replay\",\"state\":\"done\",\"total\":3,\"processed\":3,"
                            + "\"done\":3,\"skipped\":0,\"refused\":0,\"requestedBy\":\"jobctl\"}"
                });

        assertThat(run("bulk", "run", "dlq-replay", "--provider", "fake-b", "--yes", url))
                .isZero();

        assertThat(out.toString()).contains("matches 3", "11", "bulk action 7  dlq-replay  done  3/3  done=3");
        assertThat(err.toString()).contains("1/3");
        assertThat(requests).hasSize(3);
        assertThat(requests.get(0))
                .startsWith("POST /admin/bulk/dlq-replay/dry-run")
                .contains("fake-b");
        assertThat(requests.get(1))
                .startsWith("POST /admin/bulk/dlq-replay/run ")
                .contains("the-token", "fake-b");
        assertThat(requests.get(2)).startsWith("GET /admin/bulk/7");
    }

    @Test
    void bulkRunWithoutYesAndNobodyToAskActsOnNothing() throws IOException {
        String url = api(new String[] {
            "200", "{\"action\":\"job-cancel\",\"filter\":{},\"count\":2,\"sample\":[],\"token\":\"t\"}"
        });

        assertThat(run("bulk", "run", "job-cancel", "--owner", "alice", url)).isEqualTo(ExitCodes.REFUSED);

        assertThat(err.toString()).contains("job-cancel on 2 item(s)? [y/N]", "not confirmed");
        assertThat(requests).hasSize(1);
    }

    private static PublicKey developmentPublicKey() throws Exception {
        String pem = Files.readString(Path.of("../dev/jwt/public.pem"))
                .replaceAll("-----(BEGIN|END) PUBLIC KEY-----", "")
                .replaceAll("\\s", "");
        return KeyFactory.getInstance("RSA")
                .generatePublic(new X509EncodedKeySpec(Base64.getDecoder().decode(pem)));
    }
}
