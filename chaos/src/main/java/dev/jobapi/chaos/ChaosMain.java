package dev.jobapi.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The soak's driver, started by {@code chaos/run} once the system is up: {@code run} drives the load and
 * the faults, drains and checks; {@code check} only checks a stack a run left behind. Exit status 0 when
 * every invariant holds, 1 on any violation, 2 on bad arguments.
 */
public final class ChaosMain {

    private ChaosMain() {}

    /** The command line; chaos/run passes every one of these. */
    record Options(
            String mode,
            int minutes,
            int jobs,
            long seed,
            List<URI> apis,
            URI fake,
            Drain.Database database,
            Path git,
            Path privateKey,
            String ctl,
            URI amqp,
            Path state,
            Path reportDir,
            long readTimeoutMs,
            boolean cluster,
            boolean asyncStandby,
            List<URI> apiManagement,
            List<URI> workerManagement,
            Duration sweepInterval,
            Duration dbSocketTimeout,
            int gateMinimumCalls,
            Duration gateWindow) {

        static Options parse(String[] args) {
            if (args.length == 0 || !(args[0].equals("run") || args[0].equals("check"))) {
                throw new IllegalArgumentException("first argument: run or check");
            }
            Map<String, String> values = new HashMap<>();
            for (int i = 1; i < args.length; i += 2) {
                if (!args[i].startsWith("--") || i + 1 >= args.length) {
                    throw new IllegalArgumentException("expected --name value pairs, got " + Arrays.toString(args));
                }
                values.put(args[i].substring(2), args[i + 1]);
            }
            List<URI> apis = new ArrayList<>();
            for (String api : required(values, "api").split(",")) {
                apis.add(URI.create(api));
            }
            return new Options(
                    args[0],
                    Integer.parseInt(values.getOrDefault("minutes", "2")),
                    Integer.parseInt(values.getOrDefault("jobs", "80")),
                    Long.parseLong(values.getOrDefault("seed", "1")),
                    apis,
                    URI.create(required(values, "fake")),
                    new Drain.Database(
                            required(values, "db"), required(values, "db-user"), required(values, "db-password")),
                    Path.of(required(values, "git")),
                    Path.of(required(values, "private-key")),
                    required(values, "ctl"),
                    URI.create(values.getOrDefault("amqp", "amqp://jobapi:jobapi@127.0.0.1:28672/jobapi-chaos")),
                    Path.of(required(values, "state")),
                    Path.of(values.getOrDefault("report-dir", "chaos/reports")),
                    Long.parseLong(values.getOrDefault("read-timeout-ms", "2000")),
                    "cluster".equals(values.getOrDefault("rig", "single")),
                    "async".equals(values.getOrDefault("standby", "sync")),
                    uris(values.getOrDefault("management", "")),
                    uris(values.getOrDefault("worker-management", "")),
                    Duration.ofSeconds(Long.parseLong(values.getOrDefault("sweep-interval-s", "2"))),
                    Duration.ofSeconds(Long.parseLong(values.getOrDefault("db-socket-timeout-s", "30"))),
                    Integer.parseInt(values.getOrDefault("gate-minimum-calls", "20")),
                    Duration.ofSeconds(Long.parseLong(values.getOrDefault("gate-window-s", "10"))));
        }

        private static List<URI> uris(String list) {
            List<URI> uris = new ArrayList<>();
            for (String uri : list.split(",")) {
                if (!uri.isBlank()) {
                    uris.add(URI.create(uri));
                }
            }
            return uris;
        }

        private static String required(Map<String, String> values, String name) {
            String value = values.get(name);
            if (value == null) {
                throw new IllegalArgumentException("--" + name + " is required");
            }
            return value;
        }
    }

    public static void main(String[] args) throws Exception {
        Options options;
        try {
            options = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("chaos driver: " + e.getMessage());
            System.exit(2);
            return;
        }
        boolean clean = options.mode().equals("run") ? run(options) : check(options);
        System.exit(clean ? 0 : 1);
    }

    private static boolean run(Options options) throws Exception {
        // The receivers listen from the endpoints' registration to the last check.
        try (WebhookReceiver receiver = new WebhookReceiver(options.seed())) {
            return run(options, receiver);
        }
    }

    private static boolean run(Options options, WebhookReceiver receiver) throws Exception {
        Instant startedAt = Instant.now();
        Duration window = Duration.ofMinutes(options.minutes());
        Api api = new Api(options.apis());
        Ctl ctl = new Ctl(options.ctl());
        ClientLedger ledger = new ClientLedger();
        DevTokens tokens = DevTokens.fromPem(options.privateKey());
        Load load = new Load(api, ledger, tokens, options.seed(), options.fake(), options.readTimeoutMs());
        List<Faults.Planned> plan = options.cluster()
                ? Faults.clusterSchedule(options.seed(), window)
                : Faults.schedule(options.seed(), window);
        Faults faults = new Faults(
                ctl,
                api,
                plan,
                options.amqp(),
                options.seed(),
                ledger,
                new ProviderOutage(
                        options.fake(), options.database(), options.gateMinimumCalls(), options.gateWindow()),
                new ProviderPause(
                        api, tokens.mint("chaos-operator", List.of("operator")), options.fake(), options.database()));
        Recovery recovery = null;
        if (options.cluster()) {
            recovery = new Recovery(options.apiManagement(), options.workerManagement(), ctl, Duration.ofSeconds(4));
            api.onIntake(recovery::intake);
            faults.measureWith(recovery);
            recovery.start();
        }

        System.out.println("==> money budget: "
                + new SpendBudget(api, tokens.mint("chaos-operator", List.of("operator"))).set(options.jobs()));
        Webhooks webhooks = new Webhooks(api, tokens, receiver);
        System.out.println("==> " + webhooks.register());
        System.out.printf(
                "==> load and faults for %d minute(s): %d jobs (%.1f a second)%n",
                window.toMinutes(), options.jobs(), options.jobs() / (double) window.toSeconds());
        Instant loadStart = Instant.now();
        Thread faultThread = new Thread(
                () -> {
                    try {
                        faults.run(loadStart, window);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                },
                "faults");
        faultThread.start();
        load.run(window, options.jobs());
        long rest = Duration.between(Instant.now(), loadStart.plus(window)).toMillis();
        if (rest > 0) {
            Thread.sleep(rest);
        }
        faultThread.join();
        System.out.println("==> faults stopped (rollouts included); every process running again");
        ctl.ensureRunning();

        System.out.println("==> draining");
        FakeLog fakeLog = new FakeLog(options.fake());
        Drain drain = new Drain(options.database(), ctl, load, fakeLog, options.seed());
        Duration budget = Drain.budget(options.minutes(), options.jobs());
        Duration drainTook = drain.await(budget);
        faults.stopWatching();
        System.out.println("==> waiting for the webhook deliveries");
        Duration webhooksTook = webhooks.awaitSettled(options.database(), Webhooks.SETTLE_BUDGET);
        List<String> serviceViolations = new ArrayList<>();
        String serviceSection = "";
        if (recovery != null) {
            recovery.stop();
            serviceSection = recovery.render(serviceViolations);
            recovery.finalMembers(serviceViolations);
        }
        Duration loadAndDrain = Duration.between(loadStart, Instant.now());
        serviceSection += EndOfRunChecks.render(
                EndOfRunChecks.lookupsCrowdedWithin(fakeLog.lookups(), options.sweepInterval()),
                EndOfRunChecks.blockedThreads(ctl, options.dbSocketTimeout()),
                options.sweepInterval(),
                options.dbSocketTimeout(),
                serviceViolations);

        System.out.println("==> checking");
        ClientLedger.Saved saved = ledger.saved();
        ledger.save(options.state().resolve("ledger.json"));
        WebhookReceiver.Log received = receiver.log();
        received.save(options.state().resolve("webhooks.json"));
        Checker.Result result = checkWith(options, saved, received, tokens);
        Report.Run summary = new Report.Run(
                options.seed(),
                options.minutes(),
                options.jobs(),
                startedAt,
                Duration.between(startedAt, Instant.now()),
                drainTook,
                webhooksTook,
                load.scriptedFaults(),
                faults.injected(),
                faults.log(),
                faults.skipped(),
                drain.followUps(),
                budget,
                load.pace(window, options.jobs()),
                loadAndDrain,
                faults.rolledProcesses(),
                faults.forcedKills(),
                faults.queueRedeclaredAfter(),
                options.cluster(),
                options.asyncStandby(),
                faults.failed(),
                serviceSection,
                serviceViolations);
        return report(options, Report.render(summary, saved, result), result) && summary.clean();
    }

    private static boolean check(Options options) throws Exception {
        ClientLedger.Saved saved = ClientLedger.load(options.state().resolve("ledger.json"));
        Checker.Result result = checkWith(
                options,
                saved,
                WebhookReceiver.Log.load(options.state().resolve("webhooks.json")),
                DevTokens.fromPem(options.privateKey()));
        return report(options, Report.render(null, saved, result), result);
    }

    private static Checker.Result checkWith(
            Options options, ClientLedger.Saved ledger, WebhookReceiver.Log webhooks, DevTokens tokens)
            throws Exception {
        JsonNode providerLog = new FakeLog(options.fake()).fetch();
        FakeLog.save(providerLog, options.state().resolve("fake-requests.json"));
        Ctl ctl = new Ctl(options.ctl());
        Checker.Inputs inputs = new Checker.Inputs(
                ledger,
                FakeLog.requests(providerLog),
                options.git(),
                DeadLetters.list(new Api(options.apis()), tokens.mint("chaos-operator", List.of("operator"))),
                ctl.queueDepths(),
                webhooks);
        try (Connection db = options.database().connect()) {
            return Checker.check(db, inputs);
        }
    }

    private static boolean report(Options options, String report, Checker.Result result) throws IOException {
        System.out.println();
        System.out.println(report);
        Files.createDirectories(options.reportDir());
        Path file = options.reportDir().resolve("latest.md");
        Files.writeString(file, report);
        System.out.println("report written to " + file);
        return result.clean();
    }
}
