package dev.jobapi.fakeprovider;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * A scriptable model provider speaking OpenAI chat completions ({@code /v1/chat/completions}) and Anthropic messages
 * ({@code /v1/messages}) from the same scripts, and sending signed completion callbacks when a step asks for one.
 * Started in-process by tests and by {@link FakeProviderMain} for local runs and the chaos suite.
 *
 * <pre>{@code
 * try (FakeProvider fake = FakeProvider.start(0)) {
 *     fake.addScript(Script.of("fix the counter", Step.failing(502), Step.ok())); // any model, by prompt text
 *     fake.addScript(Script.forModel("fake-b", Step.failing(400))); // every request for the model fake-b
 *     // point the client under test at fake.baseUrl() + "/v1"
 * }
 * }</pre>
 */
public final class FakeProvider implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(FakeProvider.class.getName());
    private static final String LOOPBACK = "127.0.0.1";
    private static final String CHAT_COMPLETIONS = "/v1/chat/completions";
    private static final String MESSAGES = "/v1/messages";
    private static final String SCRIPTS = "/fake/scripts";
    private static final String REQUESTS = "/fake/requests";
    private static final String CALLBACKS = "/fake/callbacks";
    private static final String LOOKUPS = "/fake/lookups";
    private static final String OUTAGE = "/fake/outage";

    private final HttpServer server;
    private final ExecutorService executor;
    private final Clock clock = Clock.systemUTC();
    private final Consumer<String> accessLog;
    private final AtomicReference<ProviderState> state = new AtomicReference<>(new ProviderState());
    private final Callbacks callbacks = new Callbacks(clock);
    private final Answering answering = new Answering(state::get, clock, callbacks);
    private final ChatCompletions chatCompletions = new ChatCompletions(state::get, clock, answering);
    private final Messages messages = new Messages(answering);
    private final AtomicBoolean stopped = new AtomicBoolean();

    private FakeProvider(HttpServer server, Consumer<String> accessLog) {
        this.server = server;
        this.accessLog = accessLog;
        // A thread per request, so one request sleeping through its delay never holds up another.
        this.executor = Executors.newCachedThreadPool(namedThreads());
        server.setExecutor(executor);
        server.createContext("/", this::handle);
    }

    /** Starts a server on 127.0.0.1; port 0 picks a free port. */
    public static FakeProvider start(int port) {
        return start(LOOPBACK, port, line -> {});
    }

    /** Starts a server on {@code host}, handing one line per answered request to {@code accessLog}. */
    static FakeProvider start(String host, int port, Consumer<String> accessLog) {
        // Without TCP_NODELAY (the JDK server's default) each write of an answer after the first (the
        // headers are one) waits for the client's delayed ACK: about 40 ms an answer on a kept-alive
        // connection. Read once, when the JVM's first JDK server starts.
        System.setProperty("sun.net.httpserver.nodelay", "true");
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress(host, port), 0);
            FakeProvider fake = new FakeProvider(server, accessLog);
            server.start();
            return fake;
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot start the fake provider on " + host + ":" + port, e);
        }
    }

    public int port() {
        return server.getAddress().getPort();
    }

    /** The server's root, e.g. {@code http://127.0.0.1:8090}; OpenAI clients take {@code baseUrl() + "/v1"}. */
    public String baseUrl() {
        InetAddress address = server.getAddress().getAddress();
        String host;
        if (address.isAnyLocalAddress()) {
            host = LOOPBACK;
        } else if (address instanceof Inet6Address) {
            host = "[" + address.getHostAddress() + "]";
        } else {
            host = address.getHostAddress();
        }
        return "http://" + host + ":" + port();
    }

    /** Adds a script after the existing ones; the same as {@code POST /fake/scripts}. */
    public void addScript(Script script) {
        state.get().addScript(Objects.requireNonNull(script, "script"));
    }

    /**
     * Forgets all scripts, received requests and stored completions; the same as {@code DELETE /fake/scripts}.
     * Requests still in their delay finish into the forgotten state.
     */
    public void clearScripts() {
        state.set(new ProviderState());
    }

    /**
     * An outage: for {@code length} from now every request for {@code model} (null: any model) is answered {@code
     * status} (and logged, its step the failure), the scripts left where they were; the same as {@code POST
     * /fake/outage} with {@code {"status", "forMs", "model"}} ({@code model} optional).
     */
    public void startOutage(int status, Duration length, String model) {
        if (status < 400 || status > 599 || length.isNegative()) {
            throw new IllegalArgumentException(
                    "An outage answers an error status 400-599 for a length of time, not " + status + " for " + length);
        }
        answering.startOutage(status, length, model);
    }

    /** Ends an outage early; the same as {@code DELETE /fake/outage}. */
    public void endOutage() {
        answering.endOutage();
    }

    /** What was received, in arrival order; the same as {@code GET /fake/requests}. */
    public List<ReceivedRequest> requests() {
        return state.get().requests();
    }

    /**
     * Where steps with {@code callbackAfterMs} post their completion: {@code <baseUrl>/callbacks/<model>}, the model
     * the request asked for, signed with {@code secret}. Until this is called such callbacks are recorded as not sent.
     */
    public void configureCallbacks(String baseUrl, String secret) {
        callbacks.configure(baseUrl, secret);
    }

    /** The callbacks sent (or not) so far, in the order they went out; the same as {@code GET /fake/callbacks}. */
    public List<CallbackSent> callbacks() {
        return state.get().callbacks();
    }

    /** The reads of stored completions so far, in arrival order; the same as {@code GET /fake/lookups}. */
    public List<LookupReceived> lookups() {
        return state.get().lookups();
    }

    /** Stops listening, drops open connections, interrupts requests still in their delay and drops pending callbacks. */
    public void stop() {
        if (stopped.compareAndSet(false, true)) {
            server.stop(0);
            executor.shutdownNow();
            callbacks.stop();
        }
    }

    @Override
    public void close() {
        stop();
    }

    private void handle(HttpExchange exchange) {
        long startedNanos = System.nanoTime();
        try {
            route(exchange);
        } catch (ProviderError e) {
            answerError(exchange, e.status(), e.getMessage());
        } catch (IOException e) {
            // The client went away or the connection broke mid-answer: there is no one left to answer.
            LOG.log(Level.DEBUG, "Connection lost while answering " + exchange.getRequestURI(), e);
        } catch (RuntimeException e) {
            // Logged here with its stack trace; the client only ever gets the API's error shape.
            LOG.log(Level.ERROR, "Unexpected failure answering " + exchange.getRequestURI(), e);
            answerError(exchange, 500, "The fake provider failed unexpectedly.");
        } finally {
            exchange.close();
            accessLog.accept(String.format(
                    "%s %s %s %d %dms",
                    clock.instant(),
                    exchange.getRequestMethod(),
                    exchange.getRequestURI(),
                    exchange.getResponseCode(),
                    (System.nanoTime() - startedNanos) / 1_000_000));
        }
    }

    private void route(HttpExchange exchange) throws IOException {
        String method = exchange.getRequestMethod();
        String path = exchange.getRequestURI().getPath();
        if (path.equals(CHAT_COMPLETIONS) && method.equals("POST")) {
            chatCompletions.create(exchange);
        } else if (path.equals(CHAT_COMPLETIONS) && method.equals("GET")) {
            chatCompletions.list(exchange);
        } else if (path.startsWith(CHAT_COMPLETIONS + "/") && method.equals("GET") && isSegment(path)) {
            chatCompletions.get(exchange, path.substring(CHAT_COMPLETIONS.length() + 1));
        } else if (path.equals(MESSAGES) && method.equals("POST")) {
            messages.create(exchange);
        } else if (path.equals(SCRIPTS) && method.equals("POST")) {
            Script script = Exchanges.read(exchange, Script.class);
            addScript(script);
            Exchanges.sendJson(exchange, 201, script);
        } else if (path.equals(SCRIPTS) && method.equals("DELETE")) {
            clearScripts();
            Exchanges.sendNoContent(exchange);
        } else if (path.equals(OUTAGE) && method.equals("POST")) {
            JsonNode body = Exchanges.readTree(exchange);
            if (!body.path("status").canConvertToInt() || !body.path("forMs").canConvertToLong()) {
                throw new ProviderError(400, "An outage needs {\"status\": 400-599, \"forMs\": milliseconds}.");
            }
            try {
                startOutage(
                        body.path("status").asInt(),
                        Duration.ofMillis(body.path("forMs").asLong()),
                        body.hasNonNull("model") ? body.get("model").asText() : null);
            } catch (IllegalArgumentException e) {
                throw new ProviderError(400, e.getMessage());
            }
            Exchanges.sendNoContent(exchange);
        } else if (path.equals(OUTAGE) && method.equals("DELETE")) {
            endOutage();
            Exchanges.sendNoContent(exchange);
        } else if (path.equals(REQUESTS) && method.equals("GET")) {
            Exchanges.sendJson(exchange, 200, requests());
        } else if (path.equals(CALLBACKS) && method.equals("GET")) {
            Exchanges.sendJson(exchange, 200, callbacks());
        } else if (path.equals(LOOKUPS) && method.equals("GET")) {
            Exchanges.sendJson(exchange, 200, lookups());
        } else {
            throw new ProviderError(404, "Unknown route: " + method + " " + path);
        }
    }

    /** Whether the part after {@code /v1/chat/completions/} is exactly one non-empty path segment. */
    private static boolean isSegment(String path) {
        String rest = path.substring(CHAT_COMPLETIONS.length() + 1);
        return !rest.isEmpty() && !rest.contains("/");
    }

    private static void answerError(HttpExchange exchange, int status, String message) {
        // Once the status line is out, the answer cannot be changed; closing the exchange is all that is left.
        if (exchange.getResponseCode() != -1) {
            return;
        }
        try {
            if (exchange.getRequestURI().getPath().equals(MESSAGES)) {
                Exchanges.sendJson(exchange, status, Messages.errorBody(status, message));
            } else {
                Exchanges.sendError(exchange, status, message);
            }
        } catch (IOException e) {
            LOG.log(Level.DEBUG, "Connection lost while answering an error", e);
        }
    }

    /** Names the workers, so a thread dump of a test that hangs shows which threads are the fake provider's. */
    private static ThreadFactory namedThreads() {
        AtomicInteger count = new AtomicInteger();
        return runnable -> new Thread(runnable, "fake-provider-" + count.incrementAndGet());
    }
}
