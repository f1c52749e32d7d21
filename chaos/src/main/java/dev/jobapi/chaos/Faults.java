package dev.jobapi.chaos;

import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The infrastructure faults, on a schedule drawn from the seed and injected one after another through
 * {@code chaos/run ctl}. Each fault that takes a process down also brings it back, so the schedule
 * never ends with part of the system missing. Rolling restarts run on a thread of their own, beside the
 * other faults, as a Deployment rollout runs beside whatever else happens to a cluster.
 */
final class Faults {

    enum Kind {
        WORKER_SIGKILL("SIGKILL a worker, restart it"),
        RABBITMQ_CLOSE_CONNECTIONS("rabbitmqctl close_all_connections"),
        RABBITMQ_RESTART("restart RabbitMQ"),
        POSTGRES_TERMINATE_BACKENDS("pg_terminate_backend on the services' connections"),
        POSTGRES_RESTART("restart PostgreSQL"),
        API_SIGKILL_MID_REQUEST("SIGKILL an api process mid-request, restart it"),
        WORKER_ROLLOUT("rolling restart of the workers (SIGTERM, exit, start, ready; one at a time)"),
        API_ROLLOUT("rolling restart of the api processes (SIGTERM, exit, start, ready; one at a time)"),
        WORK_QUEUE_DELETED("rabbitmqctl delete_queue jobs.attempts (the services must declare it again)"),
        POISON_MESSAGES("poison messages published to jobs.attempts (must end in the DLQ, alone)"),
        MQ_LEADER_KILL("SIGKILL the RabbitMQ node leading jobs.attempts, restart it"),
        MQ_WORKER_NODE_KILL(
                "SIGKILL a RabbitMQ node holding worker connections (only theirs where one does), restart it"),
        MQ_NODE_PAUSE("SIGSTOP a RabbitMQ node 60-90 s, SIGCONT, heal a partition left recorded"),
        PG_FAILOVER("PostgreSQL failover: standby lags 5 s, primary SIGSTOPped 30-60 s, SIGKILLed, standby"
                + " promoted, old primary rejoined as the standby"),
        PROVIDER_OUTAGE("provider outage: the fake provider answers " + ProviderOutage.PROVIDER + "'s calls 503 for "
                + ProviderOutage.LENGTH.toSeconds() + " s, up to " + ProviderOutage.LONGEST.toSeconds()
                + " s until its breaker held a call or had calls enough to judge"),
        PROVIDER_PAUSE("provider pause: an operator pauses " + ProviderPause.PROVIDER
                + " (a third of the window, at most 10 min), then resumes it");

        final String label;

        Kind(String label) {
            this.label = label;
        }

        boolean rollout() {
            return this == WORKER_ROLLOUT || this == API_ROLLOUT;
        }

        /** Every run must have these, however late the plan runs. */
        boolean mandatory() {
            return this == RABBITMQ_RESTART
                    || this == POSTGRES_RESTART
                    || this == WORK_QUEUE_DELETED
                    || this == PROVIDER_OUTAGE
                    || this == PROVIDER_PAUSE
                    || cluster();
        }

        /** Faults that run on a thread of their own, beside the others: the cluster's, the outage and the pause. */
        boolean ownThread() {
            return cluster() || this == PROVIDER_OUTAGE || this == PROVIDER_PAUSE;
        }

        /** The clustered rig's faults: each runs on a thread of its own kind (broker, database). */
        boolean cluster() {
            return this == MQ_LEADER_KILL
                    || this == MQ_WORKER_NODE_KILL
                    || this == MQ_NODE_PAUSE
                    || this == PG_FAILOVER;
        }

        /** Faults whose recovery the report measures (the broker's and the clustered database's). */
        boolean measured() {
            return cluster()
                    || this == RABBITMQ_RESTART
                    || this == RABBITMQ_CLOSE_CONNECTIONS
                    || this == POSTGRES_RESTART
                    || this == POSTGRES_TERMINATE_BACKENDS;
        }
    }

    record Planned(Duration at, Kind kind, int process) {}

    private static final int WORKERS = 3;
    private static final int APIS = 2;
    /**
     * A rollout's grace before SIGKILL. Kubernetes gives the api 30 s and the worker 300 s (its provider calls
     * last up to minutes); the soak's provider calls end within seconds (2 s read timeout, three sends), so
     * 30 s is ample for both here, and a SIGKILL after it is a drain that did not finish.
     */
    static final int GRACE_SECONDS = 30;
    /** How long a close_all_connections waits for the services to hold a connection it can close. */
    static final Duration CLOSE_FINDS_CONNECTIONS_WITHIN = Duration.ofSeconds(60);
    /** Poison messages per run: enough to see each land in the DLQ, few enough to read in the report. */
    static final int POISON_COUNT = 3;

    private final Ctl ctl;
    private final Api api;
    private final List<Planned> plan;
    private final URI amqp;
    private final long seed;
    private final ClientLedger ledger;
    private final ProviderOutage outage;
    private final ProviderPause pause;
    private final Map<Kind, Integer> injected = new EnumMap<>(Kind.class);
    private final List<String> log = new ArrayList<>();
    // Processes a rollout is stopping on purpose: the supervisor's round must not start them behind its back.
    private final Set<String> rolling = new HashSet<>();
    /**
     * Processes a rollout is restarting, from its SIGTERM until they are ready again: a kill fault takes
     * another one. Killed while its rollout waited for it (clustered run 16: worker-2, three times in
     * 14 s behind a failover), the rollout gave up on it and the run failed for the soak's own clash.
     */
    private final Set<String> inRollout = new HashSet<>();

    private final Object supervisor = new Object();
    private int skipped;
    private int rolledProcesses;
    private int forcedKills;
    private Instant queueDeletedAt;
    private Duration queueRedeclaredAfter;
    private volatile boolean stopWatching;
    private Thread queueWatcher;
    private final List<String> failed = new ArrayList<>();
    /**
     * Held through a database failover: the single-node database faults wait for it (while the primary is
     * stopped there is no primary to terminate connections on or to restart; the second clustered soak's
     * pg_terminate_backend failed with "no primary" for that reason).
     */
    private final Object database = new Object();
    /**
     * Held through a provider outage, and through a database failover until its standby is promoted, so
     * neither overlaps the other: while no primary takes commits nothing is claimed, no call reaches the
     * failing provider, and the outage's check (the breaker holds within a few calls) tests nothing
     * (clustered run 12: 0 sends). Not held through the old primary's rejoin: the promoted standby takes
     * commits alone meanwhile, and an outage waiting behind a rejoin of 102 s (CI, 2026-12-06) ran after
     * the load window, when no new job reached the provider. Taken before {@link #database}.
     */
    private final Semaphore failoverOrOutage = new Semaphore(1);
    /**
     * Held while a broker node is taken down (a kill, a stop, a graceful restart): the clustered soak's broker
     * faults run on two threads, and a 3-minute run with seed 7 looked the leader up on node 1 while the other
     * thread's graceful restart took node 1 down, so the kill found no node to kill. Also held from the work
     * queue's deletion until the services declared it again (see WORK_QUEUE_DELETED).
     */
    private final Object brokerNodes = new Object();

    private Recovery recovery;

    Faults(
            Ctl ctl,
            Api api,
            List<Planned> plan,
            URI amqp,
            long seed,
            ClientLedger ledger,
            ProviderOutage outage,
            ProviderPause pause) {
        this.outage = outage;
        this.pause = pause;
        this.ctl = ctl;
        this.api = api;
        this.plan = plan;
        this.amqp = amqp;
        this.seed = seed;
        this.ledger = ledger;
    }

    /** The clustered soak's watchers: told when each measured fault hit and when it was undone. */
    void measureWith(Recovery recovery) {
        this.recovery = recovery;
    }

    /**
     * The clustered rig's schedule: the single-node schedule (its broker restart aimed at a node drawn from the
     * seed) plus, per five minutes of window (at least one each), a kill of the work queue's leader (10-25% into
     * the slice) and of a node holding only worker connections (55-70%); per ten minutes (at least one each) a
     * node stopped for 60-90 s (30-40% into the slice) on the broker's thread, and a database failover with the
     * primary stopped 30-60 s (20-35%) on a thread of its own. For a broker stop, {@code process} is node x 100
     * + seconds; for a failover, the seconds.
     */
    static List<Planned> clusterSchedule(long seed, Duration window) {
        Random random = new Random(seed ^ 0x29C1L);
        long minutes = Math.max(1, window.toMinutes());
        long ms = window.toMillis();
        List<Planned> plan = new ArrayList<>();
        for (Planned p : schedule(seed, window)) {
            plan.add(p.kind() == Kind.RABBITMQ_RESTART ? new Planned(p.at(), p.kind(), 1 + random.nextInt(3)) : p);
        }
        long kills = Math.max(1, minutes / 5);
        for (int i = 0; i < kills; i++) {
            double slice = 1.0 / kills;
            plan.add(new Planned(at(ms, slice * (i + 0.10 + 0.15 * random.nextDouble())), Kind.MQ_LEADER_KILL, 0));
            plan.add(new Planned(at(ms, slice * (i + 0.55 + 0.15 * random.nextDouble())), Kind.MQ_WORKER_NODE_KILL, 0));
        }
        long stops = Math.max(1, minutes / 10);
        for (int i = 0; i < stops; i++) {
            double slice = 1.0 / stops;
            int node = 1 + random.nextInt(3);
            plan.add(new Planned(
                    at(ms, slice * (i + 0.30 + 0.10 * random.nextDouble())),
                    Kind.MQ_NODE_PAUSE,
                    node * 100 + 60 + random.nextInt(31)));
            plan.add(new Planned(
                    at(ms, slice * (i + 0.20 + 0.15 * random.nextDouble())),
                    Kind.PG_FAILOVER,
                    30 + random.nextInt(31)));
        }
        plan.sort(Comparator.comparing(Planned::at));
        return plan;
    }

    /**
     * The schedule for a window: each restart once (RabbitMQ in the first half, PostgreSQL in the second),
     * the other kinds about once or twice a minute, all inside the first 85% of the window so the system
     * is whole again before the load stops. The poison messages early (5-15%), the work queue's deletion once
     * (40-50%). One api rollout and one worker rollout per three minutes, at least one of each: the window is
     * cut in that many slices, the api's rollout starts 5-15% into its slice (it is the shorter), the workers'
     * 35-50% into it. The provider's outage once (50-60%), and its pause once (15-25%, a third of the window
     * and at most ten minutes).
     */
    static List<Planned> schedule(long seed, Duration window) {
        Random random = new Random(seed ^ 0x5DEECE66DL);
        long minutes = Math.max(1, window.toMinutes());
        long ms = window.toMillis();
        List<Planned> plan = new ArrayList<>();
        plan.add(new Planned(at(ms, 0.25 + 0.15 * random.nextDouble()), Kind.RABBITMQ_RESTART, 0));
        plan.add(new Planned(at(ms, 0.55 + 0.15 * random.nextDouble()), Kind.POSTGRES_RESTART, 0));
        addSpread(plan, random, ms, Kind.WORKER_SIGKILL, 2 * minutes, WORKERS);
        addSpread(plan, random, ms, Kind.RABBITMQ_CLOSE_CONNECTIONS, minutes, 0);
        addSpread(plan, random, ms, Kind.POSTGRES_TERMINATE_BACKENDS, minutes, 0);
        addSpread(plan, random, ms, Kind.API_SIGKILL_MID_REQUEST, minutes, 2);
        plan.add(new Planned(at(ms, 0.05 + 0.10 * random.nextDouble()), Kind.POISON_MESSAGES, 0));
        plan.add(new Planned(at(ms, 0.40 + 0.10 * random.nextDouble()), Kind.WORK_QUEUE_DELETED, 0));
        plan.add(new Planned(at(ms, 0.50 + 0.10 * random.nextDouble()), Kind.PROVIDER_OUTAGE, 0));
        long rollouts = Math.max(1, (minutes + 2) / 3);
        for (int i = 0; i < rollouts; i++) {
            double slice = 1.0 / rollouts;
            plan.add(new Planned(at(ms, slice * (i + 0.05 + 0.10 * random.nextDouble())), Kind.API_ROLLOUT, APIS));
            plan.add(
                    new Planned(at(ms, slice * (i + 0.35 + 0.15 * random.nextDouble())), Kind.WORKER_ROLLOUT, WORKERS));
        }
        // Drawn last, so the draws above (and the plans of earlier runs' seeds) stay as they were.
        plan.add(new Planned(at(ms, 0.15 + 0.10 * random.nextDouble()), Kind.PROVIDER_PAUSE, (int)
                ProviderPause.lengthFor(window).toSeconds()));
        plan.sort(Comparator.comparing(Planned::at));
        return plan;
    }

    private static void addSpread(List<Planned> plan, Random random, long ms, Kind kind, long count, int processes) {
        for (int i = 0; i < count; i++) {
            int process = processes == 0 ? 0 : 1 + random.nextInt(processes);
            plan.add(new Planned(at(ms, 0.05 + 0.80 * random.nextDouble()), kind, process));
        }
    }

    private static Duration at(long windowMs, double fraction) {
        return Duration.ofMillis((long) (windowMs * fraction));
    }

    /**
     * Injects the plan in order from {@code start}; a fault that overruns delays the next. A killed process is
     * restarted without waiting for it to be ready: it comes up while the load and the faults go on. On a slow
     * machine the plan can fall behind: what is still due when the load window has ended is skipped (and
     * reported), except the two restarts and the queue's deletion, which every run must have. The api's and the
     * workers' rollouts run on a thread each (two Deployments roll independently), never skipped; this returns
     * when they have ended too.
     */
    void run(Instant start, Duration window) throws InterruptedException {
        List<Thread> rollouts = new ArrayList<>();
        for (Kind kind : List.of(Kind.API_ROLLOUT, Kind.WORKER_ROLLOUT)) {
            Thread thread = new Thread(
                    () -> {
                        try {
                            runRollouts(start, kind);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    },
                    "rollouts-" + kind);
            thread.start();
            rollouts.add(thread);
        }
        for (List<Kind> kinds : List.of(
                List.of(Kind.MQ_LEADER_KILL, Kind.MQ_WORKER_NODE_KILL, Kind.MQ_NODE_PAUSE),
                List.of(Kind.PG_FAILOVER),
                List.of(Kind.PROVIDER_OUTAGE),
                List.of(Kind.PROVIDER_PAUSE))) {
            Thread thread = new Thread(
                    () -> {
                        try {
                            runCluster(start, kinds);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    },
                    "cluster-" + kinds.get(0));
            thread.start();
            rollouts.add(thread);
        }
        Instant windowEnd = start.plus(window);
        for (Planned fault : plan) {
            if (fault.kind().rollout() || fault.kind().ownThread()) {
                continue;
            }
            awaitDue(start, fault);
            double startedAt = seconds(start);
            if (!fault.kind().mandatory() && Instant.now().isAfter(windowEnd)) {
                record(String.format("%6.1fs skipped, the load window has ended: %s", startedAt, fault.kind().label));
                synchronized (this) {
                    skipped++;
                }
                continue;
            }
            String detail;
            boolean done = true;
            try {
                detail = injectOne(fault, start);
            } catch (RuntimeException e) {
                // Say so in the timeline, do not count it: a fault that did not happen tested nothing, and
                // fails the run.
                detail = "FAILED, not counted: " + e.getMessage();
                done = false;
                failed(startedAt, fault.kind(), e);
            }
            // A process restarted while PostgreSQL or RabbitMQ was down may have exited at start-up:
            // started again, as Kubernetes would.
            revive();
            if (done) {
                count(fault.kind());
            }
            record(String.format(
                    "%6.1fs %s%s", startedAt, fault.kind().label, detail.isEmpty() ? "" : " (" + detail + ")"));
        }
        for (Thread thread : rollouts) {
            thread.join();
        }
    }

    /** Faults of some kinds run on their own thread, one after another, each at its time or when the one before ended. */
    private void runCluster(Instant start, List<Kind> kinds) throws InterruptedException {
        for (Planned fault : plan) {
            if (!kinds.contains(fault.kind())) {
                continue;
            }
            awaitDue(start, fault);
            double startedAt = seconds(start);
            String detail;
            try {
                detail = injectOne(fault, start);
                count(fault.kind());
            } catch (RuntimeException e) {
                detail = "FAILED, not counted: " + e.getMessage();
                failed(startedAt, fault.kind(), e);
            }
            revive();
            record(String.format("%6.1fs %s (%s)", startedAt, fault.kind().label, detail));
        }
    }

    private synchronized void failed(double at, Kind kind, RuntimeException e) {
        failed.add(String.format("%.1fs %s: %s", at, kind.label, e.getMessage()));
    }

    /** Faults whose injection failed or did nothing: each fails the run. */
    synchronized List<String> failed() {
        return List.copyOf(failed);
    }

    private void mark(Kind kind, String detail, Instant at, boolean nodeDeath) {
        if (recovery != null) {
            recovery.mark(new Recovery.Mark(
                    kind.label + (detail.isEmpty() ? "" : ": " + detail),
                    at,
                    Instant.now(),
                    kind != Kind.PG_FAILOVER
                            && kind != Kind.POSTGRES_RESTART
                            && kind != Kind.POSTGRES_TERMINATE_BACKENDS,
                    nodeDeath));
        }
    }

    /** Tells the recovery watch that the soak is stopping {@code process} on purpose. */
    private void stopping(String process) {
        if (recovery != null) {
            recovery.stopped(process);
        }
    }

    /** SIGKILL of broker node {@code node}, down for a few seconds (a pod rescheduled), started again. */
    private String killAndRestart(Kind kind, int node, String why) throws InterruptedException {
        Instant at = Instant.now();
        long pid = ctl.killNode(node);
        Thread.sleep(5_000);
        ctl.startNode(node);
        String detail = String.format(
                "node %d (%s), pid %d, started again %.1f s after the SIGKILL",
                node, why, pid, Duration.between(at, Instant.now()).toMillis() / 1000.0);
        mark(kind, detail, at, true);
        return detail;
    }

    /** The index of a rig node named "chaos-cN@localhost". */
    static int nodeIndex(String node) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+)@").matcher(node);
        if (!m.find()) {
            throw new IllegalStateException("not a node of the rig: " + node);
        }
        return Integer.parseInt(m.group(1));
    }

    /**
     * The node to kill for "a node holding worker connections": one holding only workers'
     * connections when there is one; else, since clients spread over the address list at random,
     * the node holding the most workers' connections (api connections on it are lost too). 0 when no
     * node holds a worker's connection.
     */
    static int workerOnlyNode(Facts.Watch watch) {
        int best = 0;
        long mostWorkers = 0;
        for (var node : watch.servicesPerNode().entrySet()) {
            long workers = node.getValue().stream()
                    .filter(s -> s.startsWith("worker-"))
                    .count();
            if (workers > 0 && workers == node.getValue().size()) {
                return nodeIndex(node.getKey());
            }
            if (workers > mostWorkers) {
                mostWorkers = workers;
                best = nodeIndex(node.getKey());
            }
        }
        return best;
    }

    private String pauseNode(Planned fault) throws InterruptedException {
        int node = fault.process() / 100;
        int secs = fault.process() % 100;
        Instant at = Instant.now();
        long pid = ctl.pauseNode(node);
        Thread.sleep(secs * 1_000L);
        ctl.resumeNode(node);
        // The resumed node finds the partition within a few ticks; look for it for up to 30 s.
        Map<Integer, List<String>> partitions = Map.of();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            partitions = ctl.partitions();
            if (partitions.values().stream().anyMatch(p -> !p.isEmpty())) {
                break;
            }
            Thread.sleep(5_000);
        }
        String healed = "no partition recorded";
        if (partitions.values().stream().anyMatch(p -> !p.isEmpty())) {
            ctl.healNode(node);
            Map<Integer, List<String>> after = ctl.partitions();
            healed = "partition recorded " + partitions + ", healed (restart of node " + node + "'s broker app)"
                    + (after.values().stream().anyMatch(p -> !p.isEmpty()) ? ", STILL recorded: " + after : "");
        }
        String detail = String.format("node %d, pid %d, stopped %d s; %s", node, pid, secs, healed);
        mark(Kind.MQ_NODE_PAUSE, detail, at, false);
        return detail;
    }

    /**
     * The database failover: the standby is stopped for 5 s first (it lags, as after a network blip: with
     * synchronous replication commits wait, with an asynchronous standby they are acknowledged and never
     * reach it), then the primary is stopped too, the standby resumed, and after {@code secs} the primary is
     * SIGKILLed, the standby promoted and the old primary brought back as the new standby.
     */
    private String failover(int secs) throws InterruptedException {
        failoverOrOutage.acquire();
        synchronized (database) {
            Instant at = Instant.now();
            String promotion;
            try {
                promotion = stopPrimaryAndPromote(at, secs);
            } finally {
                failoverOrOutage.release();
            }
            String detail = promotion + ", " + ctl.rejoinStandby();
            mark(Kind.PG_FAILOVER, detail, at, false);
            return detail;
        }
    }

    /** The failover up to the standby's promotion; what it did, for the fault's detail. */
    private String stopPrimaryAndPromote(Instant at, int secs) throws InterruptedException {
        String standby = ctl.pauseDatabase("standby");
        String primary;
        try {
            Thread.sleep(5_000);
            primary = ctl.pauseDatabase("primary");
        } finally {
            // Whatever happened to the primary's pause: a standby left stopped holds every synchronous
            // commit forever (run 9: its backends filled max_connections).
            ctl.resumeDatabase(standby.split("\\s+")[1]);
        }
        Instant primaryStopped = Instant.now();
        // Into the stop, past any sane socket timeout: the threads still waiting on the stopped primary
        // (no reset, no answer) are the ones a missing JDBC socketTimeout leaves hanging. The dumps run
        // beside the stop, never lengthening it: on a loaded machine they took 85 s (run 12).
        long into = Math.min(20, Math.max(1, secs - 5));
        Thread.sleep(into * 1_000L);
        CompletableFuture<String> waiting = CompletableFuture.supplyAsync(() -> {
            try {
                Map<String, Integer> counts = counts(ctl.jdbcThreads());
                return String.format(
                        "threads waiting on the database %d s into the stop (dumps done %.1f s into it): %s",
                        into, Duration.between(primaryStopped, Instant.now()).toMillis() / 1000.0, counts);
            } catch (RuntimeException e) {
                return "threads not counted: " + e.getMessage();
            }
        });
        Thread.sleep(Math.max(
                0,
                secs * 1_000L - Duration.between(primaryStopped, Instant.now()).toMillis()));
        Instant killing = Instant.now();
        String killed = ctl.killDatabase(primary.split("\\s+")[1]);
        Instant killedAt = Instant.now();
        String promoted = ctl.promoteStandby();
        Instant promotedAt = Instant.now();
        // The stop as it was, not as planned, and what the kill's rig call took: clustered run 13 planned a
        // 31 s stop and promoted the standby 146 s after the pause.
        return String.format(
                "standby %s 5 s, primary %s %.1f s (planned %d s; %s), %s (the call took %.1f s), %s %.1f s after the"
                        + " pause",
                standby,
                primary,
                Duration.between(primaryStopped, killedAt).toMillis() / 1000.0,
                secs,
                waiting.join(),
                killed,
                Duration.between(killing, killedAt).toMillis() / 1000.0,
                promoted,
                Duration.between(at, promotedAt).toMillis() / 1000.0);
    }

    /** The rollouts of one kind, each at its time or when the one before it has ended. */
    private void runRollouts(Instant start, Kind kind) throws InterruptedException {
        for (Planned rollout : plan) {
            if (rollout.kind() != kind) {
                continue;
            }
            awaitDue(start, rollout);
            String prefix = rollout.kind() == Kind.API_ROLLOUT ? "api-" : "worker-";
            record(String.format("%6.1fs %s: begins", seconds(start), rollout.kind().label));
            for (int i = 1; i <= rollout.process(); i++) {
                rollOne(prefix + i, start);
            }
            count(rollout.kind());
            record(String.format("%6.1fs %s: done", seconds(start), rollout.kind().label));
        }
    }

    /**
     * One pod of a rollout: SIGTERM, wait for its exit (SIGKILL after the grace, counted), start it again and
     * wait until it is ready before the next.
     */
    private void rollOne(String name, Instant start) {
        double at = seconds(start);
        long began = System.nanoTime();
        synchronized (supervisor) {
            rolling.add(name);
            inRollout.add(name);
        }
        try {
            rollOne(name, at, began);
        } finally {
            synchronized (supervisor) {
                inRollout.remove(name);
            }
        }
    }

    private void rollOne(String name, double at, long began) {
        Ctl.Stop stop = null;
        String how;
        try {
            stopping(name);
            stop = ctl.term(name, GRACE_SECONDS);
            how = switch (stop.outcome()) {
                case EXITED -> "SIGTERM, exited after " + stop.seconds() + " s";
                case KILLED -> "SIGTERM, still running after " + GRACE_SECONDS + " s: SIGKILL";
                case NOT_RUNNING -> "not-running"; // a fault had just killed it
            };
        } catch (RuntimeException e) {
            how = "term failed: " + e.getMessage();
        }
        try {
            synchronized (supervisor) {
                try {
                    ctl.spawn(name);
                } finally {
                    rolling.remove(name);
                }
            }
            ctl.start(name); // already started: waits until it is ready (or starts it again)
        } catch (RuntimeException e) {
            record(String.format("%6.1fs   %s: %s; did not come back: %s", at, name, how, e.getMessage()));
            return;
        }
        boolean killed = stop != null && stop.outcome() == Ctl.StopOutcome.KILLED;
        synchronized (this) {
            rolledProcesses++;
            if (killed) {
                forcedKills++;
            }
        }
        record(String.format(
                "%6.1fs   %s: %s; ready again %.1f s after the SIGTERM",
                at, name, how, (System.nanoTime() - began) / 1e9));
    }

    /**
     * The planned process, or the next one a rollout is not restarting: a rollout restarts one process
     * at a time, so with two or more there is always one.
     */
    private String notInRollout(String prefix, int planned, int processes) {
        synchronized (supervisor) {
            for (int i = 0; i < processes; i++) {
                String name = prefix + ((planned - 1 + i) % processes + 1);
                if (!inRollout.contains(name)) {
                    return name;
                }
            }
            return prefix + planned;
        }
    }

    private static void awaitDue(Instant start, Planned fault) throws InterruptedException {
        long wait = Duration.between(Instant.now(), start.plus(fault.at())).toMillis();
        if (wait > 0) {
            Thread.sleep(wait);
        }
    }

    private static double seconds(Instant start) {
        return Duration.between(start, Instant.now()).toMillis() / 1000.0;
    }

    private void revive() {
        synchronized (supervisor) {
            ctl.revive(rolling);
        }
    }

    private synchronized void count(Kind kind) {
        injected.merge(kind, 1, Integer::sum);
    }

    /**
     * Watches for the work queue to be declared again after its deletion (by the services: the soak never
     * declares it) and records when; runs until it appears or {@link #stopWatching()}.
     */
    private void watchQueue(Instant start) {
        queueWatcher = new Thread(
                () -> {
                    while (!stopWatching) {
                        try {
                            if (ctl.queueDepths().containsKey(Checker.WORK_QUEUE)) {
                                Duration after;
                                synchronized (this) {
                                    after = Duration.between(queueDeletedAt, Instant.now());
                                    queueRedeclaredAfter = after;
                                }
                                record(String.format(
                                        "%6.1fs %s declared again, %.1f s after its deletion",
                                        seconds(start), Checker.WORK_QUEUE, after.toMillis() / 1000.0));
                                return;
                            }
                        } catch (RuntimeException brokerDown) {
                            // The broker may be restarting: look again.
                        }
                        try {
                            // rabbitmqctl starts an Erlang VM per call: every 3 s is enough on two cores.
                            Thread.sleep(3_000);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                },
                "queue-watcher");
        queueWatcher.setDaemon(true);
        queueWatcher.start();
    }

    /** Waits until the queue watcher saw the work queue declared again, at most {@code most}. */
    private void awaitRedeclared(Duration most) throws InterruptedException {
        long deadline = System.nanoTime() + most.toNanos();
        while (System.nanoTime() < deadline) {
            synchronized (this) {
                if (queueRedeclaredAfter != null) {
                    return;
                }
            }
            Thread.sleep(500);
        }
    }

    /** Ends the queue watcher (after the drain); records that the queue never came back, if so. */
    void stopWatching() {
        stopWatching = true;
        synchronized (this) {
            if (queueDeletedAt != null && queueRedeclaredAfter == null) {
                record("        " + Checker.WORK_QUEUE + " NOT declared again by the end of the drain");
            }
        }
    }

    private synchronized void record(String line) {
        log.add(line);
        System.out.println("    fault: " + line);
    }

    synchronized int skipped() {
        return skipped;
    }

    /** One fault; those that take a broker node down one at a time (see {@link #brokerNodes}). */
    private String injectOne(Planned fault, Instant start) throws InterruptedException {
        boolean nodeDown = fault.kind() == Kind.MQ_LEADER_KILL
                || fault.kind() == Kind.MQ_WORKER_NODE_KILL
                || fault.kind() == Kind.MQ_NODE_PAUSE
                || fault.kind() == Kind.RABBITMQ_RESTART && fault.process() > 0;
        if (!nodeDown) {
            return inject(fault, start);
        }
        synchronized (brokerNodes) {
            return inject(fault, start);
        }
    }

    private String inject(Planned fault, Instant start) throws InterruptedException {
        switch (fault.kind()) {
            case WORKER_SIGKILL -> {
                String worker = notInRollout("worker-", fault.process(), WORKERS);
                stopping(worker);
                ctl.kill(worker);
                Thread.sleep(1_000);
                ctl.spawn(worker);
                return worker;
            }
            case API_SIGKILL_MID_REQUEST -> {
                String process = notInRollout("api-", fault.process(), APIS);
                boolean midRequest = awaitRequestInFlight(Integer.parseInt(process.substring("api-".length())) - 1);
                stopping(process);
                ctl.kill(process);
                Thread.sleep(1_000);
                ctl.spawn(process);
                return process + (midRequest ? ", with requests in flight" : ", idle at the time");
            }
            case RABBITMQ_CLOSE_CONNECTIONS -> {
                Instant at = Instant.now();
                int closed = ctl.closeBrokerConnections();
                // Right after another close and during a database failover the services may hold no
                // connection at all (the api opens its own on use; clustered run 18: none 5 s after the
                // previous close, 28 s into a failover): wait for some rather than count a fault that did
                // nothing. None for a minute still fails the run.
                Instant giveUp = Instant.now().plus(CLOSE_FINDS_CONNECTIONS_WITHIN);
                while (closed == 0 && Instant.now().isBefore(giveUp)) {
                    Thread.sleep(2_000);
                    at = Instant.now(); // the fault's figures start at the close that did something
                    closed = ctl.closeBrokerConnections();
                }
                if (closed == 0) {
                    throw new IllegalStateException("closed 0 connections of the soak's vhost for "
                            + CLOSE_FINDS_CONNECTIONS_WITHIN.toSeconds() + " s: the fault did nothing");
                }
                mark(fault.kind(), closed + " connections", at, false);
                return closed + " connections";
            }
            case RABBITMQ_RESTART -> {
                Instant at = Instant.now();
                if (fault.process() > 0) {
                    ctl.restartBrokerNode(fault.process());
                    mark(fault.kind(), "node " + fault.process(), at, false);
                    return "node " + fault.process() + ", graceful";
                }
                ctl.restartBroker();
                mark(fault.kind(), "", at, false);
            }
            case PROVIDER_OUTAGE -> {
                failoverOrOutage.acquire();
                try {
                    return outage.inject();
                } finally {
                    failoverOrOutage.release();
                }
            }
            case PROVIDER_PAUSE -> {
                return pause.inject(Duration.ofSeconds(fault.process()));
            }
            case MQ_LEADER_KILL -> {
                return killAndRestart(fault.kind(), ctl.leader(Checker.WORK_QUEUE), "leader of " + Checker.WORK_QUEUE);
            }
            case MQ_WORKER_NODE_KILL -> {
                // One look can find no worker connected (all of them reconnecting after a fault), or fail
                // outright (rabbitmqctl list_connections timing out on a crowded machine: clustered run 10):
                // look again for up to 90 s (clustered run 16: five worker kills in 14 s, each worker
                // starting for 20-65 s on the crowded machine, left none connected for 30 s).
                Facts.Watch watch = null;
                int node = 0;
                RuntimeException lastFailure = null;
                for (long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
                        node == 0 && System.nanoTime() < until; ) {
                    try {
                        watch = ctl.watch();
                        node = workerOnlyNode(watch);
                    } catch (RuntimeException lookFailed) {
                        lastFailure = lookFailed;
                    }
                    if (node == 0) {
                        Thread.sleep(3_000);
                    }
                }
                if (node == 0) {
                    throw new IllegalStateException(
                            watch == null
                                    ? "the broker's connections could not be listed for 90 s: "
                                            + lastFailure.getMessage()
                                    : "no node holds a worker's connection (services per node: "
                                            + watch.servicesPerNode() + ")");
                }
                return killAndRestart(fault.kind(), node, "services per node: " + watch.servicesPerNode());
            }
            case MQ_NODE_PAUSE -> {
                return pauseNode(fault);
            }
            case PG_FAILOVER -> {
                return failover(fault.process());
            }
            case POSTGRES_TERMINATE_BACKENDS -> {
                int terminated;
                Instant at;
                synchronized (database) {
                    at = Instant.now();
                    terminated = ctl.terminateBackends();
                }
                mark(fault.kind(), terminated + " connections", at, false);
                return terminated + " connections";
            }
            case POSTGRES_RESTART -> {
                Instant at;
                synchronized (database) {
                    at = Instant.now();
                    ctl.restartDatabase();
                }
                mark(fault.kind(), "", at, false);
            }
            case WORK_QUEUE_DELETED -> {
                // Never while a broker node is down or stopped (see brokerNodes): RabbitMQ cannot delete a
                // quorum queue's member on a node it cannot reach ("Force delete ... failed with nodedown,
                // this may require manual data clean up"), and the queue the services then declare again
                // under the same name meets that stale member when the node returns. The second clustered
                // run after the fixes (cluster-after-fixes.md) had every worker's basic.consume time out for
                // minutes after exactly this. An operator's deletion, not a node fault: held until the
                // services declared the queue again, so no node fault starts in between.
                // Marked like the node faults, so a node fault's recovery window ends where this one starts:
                // the consumers it cancels are not the earlier fault's (clustered run 12 charged a node kill
                // with "workers not consuming" that this deletion caused).
                synchronized (brokerNodes) {
                    Instant at = Instant.now();
                    ctl.deleteQueue(Checker.WORK_QUEUE);
                    synchronized (this) {
                        queueDeletedAt = Instant.now();
                    }
                    watchQueue(start);
                    awaitRedeclared(Duration.ofSeconds(60));
                    mark(fault.kind(), "", at, false);
                }
            }
            case POISON_MESSAGES -> {
                try {
                    List<String> published = Poison.publish(amqp, Checker.WORK_QUEUE, seed, POISON_COUNT);
                    published.forEach(ledger::poisoned);
                    return published.size() + " confirmed and routed of " + POISON_COUNT;
                } catch (Exception e) {
                    return "not published: " + e;
                }
            }
            default -> throw new IllegalStateException("unknown fault " + fault.kind());
        }
        return "";
    }

    /** Waits up to five seconds for the client to have a request open at that process. */
    private boolean awaitRequestInFlight(int process) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() < deadline) {
            if (api.inFlight(process) > 0) {
                return true;
            }
            Thread.sleep(5);
        }
        return false;
    }

    synchronized Map<Kind, Integer> injected() {
        return new EnumMap<>(injected);
    }

    synchronized List<String> log() {
        return List.copyOf(log);
    }

    /** Processes a rollout stopped and brought back, and how many of them needed a SIGKILL after the grace. */
    synchronized int rolledProcesses() {
        return rolledProcesses;
    }

    synchronized int forcedKills() {
        return forcedKills;
    }

    /** How long after its deletion the work queue was back; null when it never came back (or was not deleted). */
    synchronized Duration queueRedeclaredAfter() {
        return queueRedeclaredAfter;
    }

    private static Map<String, Integer> counts(Map<String, Set<String>> threads) {
        Map<String, Integer> counts = new java.util.TreeMap<>();
        threads.forEach((process, names) -> counts.put(process, names.size()));
        return counts;
    }
}
