package dev.jobapi.chaos;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * The infrastructure faults, on a schedule drawn from the seed and injected one after another through
 * {@code chaos/run ctl}. Each fault that takes a process down also brings it back, so the schedule
 * never ends with part of the system missing.
 */
final class Faults {

    enum Kind {
        WORKER_SIGKILL("SIGKILL a worker, restart it"),
        RABBITMQ_CLOSE_CONNECTIONS("rabbitmqctl close_all_connections"),
        RABBITMQ_RESTART("restart RabbitMQ"),
        POSTGRES_TERMINATE_BACKENDS("pg_terminate_backend on the services' connections"),
        POSTGRES_RESTART("restart PostgreSQL"),
        API_SIGKILL_MID_REQUEST("SIGKILL an api process mid-request, restart it");

        final String label;

        Kind(String label) {
            this.label = label;
        }
    }

    record Planned(Duration at, Kind kind, int process) {}

    private static final int WORKERS = 3;

    private final Ctl ctl;
    private final Api api;
    private final List<Planned> plan;
    private final Map<Kind, Integer> injected = new EnumMap<>(Kind.class);
    private final List<String> log = new ArrayList<>();
    private int skipped;

    Faults(Ctl ctl, Api api, List<Planned> plan) {
        this.ctl = ctl;
        this.api = api;
        this.plan = plan;
    }

    /**
     * The schedule for a window: each restart once (RabbitMQ in the first half, PostgreSQL in the second),
     * the other kinds about once or twice a minute, all inside the first 85% of the window so the system
     * is whole again before the load stops.
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
     * reported), except the two restarts, which every run must have.
     */
    void run(Instant start, Duration window) throws InterruptedException {
        Instant windowEnd = start.plus(window);
        for (Planned fault : plan) {
            long wait = Duration.between(Instant.now(), start.plus(fault.at())).toMillis();
            if (wait > 0) {
                Thread.sleep(wait);
            }
            double startedAt = Duration.between(start, Instant.now()).toMillis() / 1000.0;
            boolean restart = fault.kind() == Kind.RABBITMQ_RESTART || fault.kind() == Kind.POSTGRES_RESTART;
            if (!restart && Instant.now().isAfter(windowEnd)) {
                record(String.format("%6.1fs skipped, the load window has ended: %s", startedAt, fault.kind().label));
                skipped++;
                continue;
            }
            String detail = inject(fault);
            // A process restarted while PostgreSQL or RabbitMQ was down may have exited at start-up:
            // started again, as Kubernetes would.
            ctl.run("revive");
            synchronized (this) {
                injected.merge(fault.kind(), 1, Integer::sum);
            }
            record(String.format(
                    "%6.1fs %s%s", startedAt, fault.kind().label, detail.isEmpty() ? "" : " (" + detail + ")"));
        }
    }

    private synchronized void record(String line) {
        log.add(line);
        System.out.println("    fault: " + line);
    }

    synchronized int skipped() {
        return skipped;
    }

    private String inject(Planned fault) throws InterruptedException {
        switch (fault.kind()) {
            case WORKER_SIGKILL -> {
                String worker = "worker-" + fault.process();
                ctl.run("kill", worker);
                Thread.sleep(1_000);
                ctl.run("spawn", worker);
                return worker;
            }
            case API_SIGKILL_MID_REQUEST -> {
                String process = "api-" + fault.process();
                boolean midRequest = awaitRequestInFlight(fault.process() - 1);
                ctl.run("kill", process);
                Thread.sleep(1_000);
                ctl.run("spawn", process);
                return process + (midRequest ? ", with requests in flight" : ", idle at the time");
            }
            case RABBITMQ_CLOSE_CONNECTIONS -> ctl.run("mq-close-connections");
            case RABBITMQ_RESTART -> ctl.run("mq-restart");
            case POSTGRES_TERMINATE_BACKENDS -> {
                return ctl.run("pg-terminate").strip() + " connections";
            }
            case POSTGRES_RESTART -> ctl.run("pg-restart");
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
}
