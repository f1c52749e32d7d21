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
            exchange.getRequestBody().readAllBytes();
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

    private static PublicKey developmentPublicKey() throws Exception {
        String pem = Files.readString(Path.of("../dev/jwt/public.pem"))
                .replaceAll("-----(BEGIN|END) PUBLIC KEY-----", "")
                .replaceAll("\\s", "");
        return KeyFactory.getInstance("RSA")
                .generatePublic(new X509EncodedKeySpec(Base64.getDecoder().decode(pem)));
    }
}
