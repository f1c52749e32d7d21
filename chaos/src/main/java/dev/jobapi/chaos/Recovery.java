package dev.jobapi.chaos;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * What the clustered soak watches while it breaks things, and how long each fault took to heal (issue 29):
 * every api's and worker's readiness (HTTP, every 0.5 s), every POST /jobs answer (from {@link Api}), and the
 * broker's view (the work queue's consumers and members, each connection and its owner: {@code ctl mq-watch},
 * every few seconds). For each broker or database fault: how long until intake answered 2xx again, until every
 * worker consumed again, until the quorum queue had all its members again, and whether each process's broker
 * connections came back (none lost, none leaked).
 */
final class Recovery {

    /** The worker's consumer connection (worker-service's AttemptConsumer names it). */
    static final String CONSUMER_CONNECTION = "jobapi-attempt-consumer";
    /** The broker check's name (common's BrokerHealthCheck; in the api no longer part of readiness). */
    static final String BROKER_CHECK = "rabbitmq";
    /** Issue 29's bounds. */
    static final Duration API_NOT_READY_BOUND = Duration.ofSeconds(10);

    static final Duration WORKERS_BOUND = Duration.ofSeconds(15);
    /** How long after a fault its effects are looked for, at most (or until the next fault of its thread). */
    static final Duration HORIZON = Duration.ofSeconds(180);

    /** A fault the report measures recovery from. {@code at}: when it hit; {@code ended}: when it was undone. */
    record Mark(String label, Instant at, Instant ended, boolean broker, boolean nodeDeath) {}

    /**
     * A POST /jobs answer: {@code status} -1 when none came (refused, reset, timed out: the process was down);
     * {@code code} its problem's, null without one.
     */
    record IntakeAnswer(Instant at, int status, String code) {
        IntakeAnswer(Instant at, int status) {
            this(at, status, null);
        }

        boolean ok() {
            return status > 0 && status < 500;
        }

        /** The api answered, with a 5xx: intake itself failing, not a process that was down. */
        boolean failedByApi() {
            return status >= 500;
        }

        /**
         * The api shed the request: 503 {@code server-busy}, which it answers only when PostgreSQL gave it no
         * connection in time or was away, or past its own capacity bounds (never for the broker: intake writes
         * the outbox, not the queue). Reported beside a broker fault, not counted against it.
         */
        boolean shed() {
            return status == 503 && "server-busy".equals(code);
        }
    }

    /** One readiness probe; {@code answered} false when the process did not answer at all (down or starting). */
    record Readiness(String process, Instant at, boolean ready, boolean brokerDown, boolean answered) {}

    record BrokerSample(Instant at, Facts.Watch watch) {}

    /**
     * One fault's figures; a null duration is "not back within the horizon", and {@code sampled} false is "no
     * broker sample in the window" (the worker and member figures then say nothing). {@code watched}: how long
     * after the fault its broker samples were taken (cut short by the next fault). {@code databaseFaultDuring}:
     * a database fault was under way in that time (a worker starting then waits for the database, not the
     * broker). {@code restarted}: the
     * processes that were down or starting in the window, left out of the worker and connection figures.
     */
    record Healed(
            Mark mark,
            Duration watched,
            boolean databaseFaultDuring,
            Set<String> restarted,
            int failedIntake,
            int shedIntake,
            int unanswered,
            boolean sampled,
            Duration intake,
            Duration workers,
            Duration members,
            String connections,
            boolean connectionsBack,
            boolean connectionsLeaked) {}

    private final List<URI> apiManagement;
    private final List<URI> workerManagement;
    private final Ctl ctl;
    private final Duration brokerEvery;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
    private final ConcurrentLinkedQueue<IntakeAnswer> intake = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Readiness> readiness = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<BrokerSample> broker = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Mark> marks = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Stop> stops = new ConcurrentLinkedQueue<>();
    private volatile boolean stop;
    private final List<Thread> threads = new ArrayList<>();

    Recovery(List<URI> apiManagement, List<URI> workerManagement, Ctl ctl, Duration brokerEvery) {
        this.apiManagement = List.copyOf(apiManagement);
        this.workerManagement = List.copyOf(workerManagement);
        this.ctl = ctl;
        this.brokerEvery = brokerEvery;
    }

    /** Every POST /jobs answer the client got: its status, or -1 when none came, and its problem's code. */
    void intake(int status, String code) {
        intake.add(new IntakeAnswer(Instant.now(), status, code));
    }

    void mark(Mark mark) {
        marks.add(mark);
    }

    void start() {
        threads.add(daemon("readiness-watch", this::watchReadiness));
        threads.add(daemon("broker-watch", this::watchBroker));
    }

    void stop() {
        stop = true;
        threads.forEach(Thread::interrupt);
    }

    private static Thread daemon(String name, Runnable body) {
        Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    private void watchReadiness() {
        while (!stop) {
            for (int i = 0; i < apiManagement.size(); i++) {
                readiness.add(probe("api-" + (i + 1), apiManagement.get(i)));
            }
            for (int i = 0; i < workerManagement.size(); i++) {
                readiness.add(probe("worker-" + (i + 1), workerManagement.get(i)));
            }
            if (!pause(Duration.ofMillis(500))) {
                return;
            }
        }
    }

    private Readiness probe(String process, URI management) {
        try {
            HttpResponse<String> answer = http.send(
                    HttpRequest.newBuilder(management.resolve("/q/health/ready"))
                            .timeout(Duration.ofSeconds(2))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            return new Readiness(process, Instant.now(), answer.statusCode() == 200, brokerDown(answer.body()), true);
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return new Readiness(process, Instant.now(), false, false, false);
        }
    }

    /** A readiness body whose failing check reads the broker ("rabbitmq-attempt-queue" DOWN). */
    static boolean brokerDown(String body) {
        try {
            for (var check : Api.JSON.readTree(body).path("checks")) {
                if (check.path("name").asText().contains(BROKER_CHECK)
                        && "DOWN".equals(check.path("status").asText())) {
                    return true;
                }
            }
        } catch (Exception notJson) {
            return false;
        }
        return false;
    }

    private void watchBroker() {
        while (!stop) {
            try {
                broker.add(new BrokerSample(Instant.now(), ctl.watch()));
            } catch (RuntimeException unreachable) {
                // Every node the CLI tried was down or stopped: no sample.
            }
            if (!pause(brokerEvery)) {
                return;
            }
        }
    }

    private boolean pause(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
            return true;
        } catch (InterruptedException e) {
            return false;
        }
    }

    // ------------------------------------------------------------------ figures ---

    /** Each fault's figures, in the order they hit. */
    List<Healed> healed() {
        List<Mark> all = new ArrayList<>(marks);
        all.sort((a, b) -> a.at().compareTo(b.at()));
        List<Healed> out = new ArrayList<>();
        List<Mark> database = all.stream().filter(m -> !m.broker()).toList();
        List<Readiness> probes = List.copyOf(readiness);
        for (int i = 0; i < all.size(); i++) {
            Mark mark = all.get(i);
            out.add(healed(
                    mark,
                    List.copyOf(intake),
                    List.copyOf(broker),
                    mark.broker() ? database : List.of(),
                    restarted(mark, List.copyOf(stops), probes),
                    interruption(all, i)));
        }
        return out;
    }

    /**
     * When something else began acting on the system during fault {@code i} of {@code sorted} (sorted by
     * start), or null: the next fault's start, or this fault's own start when a broker fault that began
     * earlier was still under way. Such a fault's effects and this one's cannot be told apart (clustered
     * run 17: a close_all_connections begun 3.5 s before a leader kill waited on the killed node, then
     * closed every worker's connection node by node 18 to 26 s into the kill, which measured the workers
     * back after 27.9 s).
     */
    static Instant interruption(List<Mark> sorted, int i) {
        Mark mark = sorted.get(i);
        boolean overlapped = sorted.subList(0, i).stream()
                .anyMatch(earlier -> earlier.broker() && earlier.ended().isAfter(mark.at()));
        if (overlapped) {
            return mark.at();
        }
        return i + 1 < sorted.size() ? sorted.get(i + 1).at() : null;
    }

    /** After a database fault its 5xx answers are the database's, for at least this long after it was undone. */
    static final Duration DATABASE_TAIL = Duration.ofSeconds(15);

    /**
     * Until when intake's 5xx are a database fault's: until intake answered 2xx again after the fault was
     * undone (at most {@link #INTAKE_TAIL} after), and at least {@link #DATABASE_TAIL}. The pools refill after
     * the fault at their own pace: in clustered run 10 a burst of four pg_terminate_backend left intake
     * answering 503 server-busy ("Unable to acquire JDBC Connection") 29 s after the last of them, which a
     * fixed 15 s tail counted against a broker node killed meanwhile.
     */
    static Instant databaseExplainsUntil(Mark db, List<IntakeAnswer> intake) {
        Instant until = db.ended().plus(DATABASE_TAIL);
        Instant back = intake.stream()
                .filter(answer -> answer.ok() && !answer.at().isBefore(db.ended()))
                .map(IntakeAnswer::at)
                .findFirst()
                .orElse(db.ended().plus(INTAKE_TAIL));
        return back.isAfter(until) ? back : until;
    }
    /** How long after a fault was undone intake failures are counted against it. */
    static final Duration INTAKE_TAIL = Duration.ofSeconds(30);

    /** Two AMQP heartbeats: by then a client has noticed a lost connection and replaced it. */
    static final Duration CONNECTIONS_SETTLE = Duration.ofSeconds(10);

    /** A process the soak stopped on purpose (a kill or a rollout's SIGTERM), and when. */
    record Stop(String process, Instant at) {}

    /** The soak stopped {@code process} now: until it is ready again it is restarting. */
    void stopped(String process) {
        stops.add(new Stop(process, Instant.now()));
    }

    /**
     * The processes restarting at some time from the fault until a minute after it was undone: stopped by
     * the soak (a kill, a rollout) and not ready again yet. Whether they consume again, and with how many
     * connections, says how long a start-up takes, not how the services survive the broker, so the
     * figures leave them out (and name them). A process merely slow to answer its probe is not one of them.
     */
    static Set<String> restarted(Mark mark, List<Stop> stops, List<Readiness> probes) {
        Instant until = mark.ended().plusSeconds(60);
        Set<String> out = new java.util.TreeSet<>();
        for (Stop stop : stops) {
            if (!stop.at().isBefore(until)) {
                continue;
            }
            Instant readyAgain = probes.stream()
                    .filter(p -> p.process().equals(stop.process()) && p.ready() && p.at().isAfter(stop.at()))
                    .map(Readiness::at)
                    .min(Instant::compareTo)
                    .orElse(Instant.MAX);
            if (readyAgain.isAfter(mark.at())) {
                out.add(stop.process());
            }
        }
        return out;
    }

    /**
     * One fault's figures. Intake: the answers from the fault until {@link #INTAKE_TAIL} after it was undone;
     * a 5xx counts against it (for a broker fault, unless a database fault of {@code explainedBy} was under way
     * or had just ended: then it is the database's), an unanswered request is reported only (the process was
     * down: a kill or a rollout, not this fault). Broker samples: until a minute after it was undone.
     */
    static Healed healed(
            Mark mark,
            List<IntakeAnswer> intake,
            List<BrokerSample> broker,
            List<Mark> explainedBy,
            Set<String> restarted,
            Instant nextFault) {
        // The broker samples of this fault: until a minute after it was undone, or until the next fault hit,
        // whose effects would otherwise be counted against this one.
        Instant until = mark.ended().plusSeconds(60);
        if (nextFault != null && nextFault.isBefore(until)) {
            until = nextFault;
        }
        Instant intakeUntil = mark.ended().plus(INTAKE_TAIL);
        // Intake: the first 2xx after the last failed POST /jobs of the window.
        Instant lastFailed = null;
        int failed = 0;
        int shed = 0;
        int unanswered = 0;
        for (IntakeAnswer answer : intake) {
            if (answer.at().isBefore(mark.at()) || !answer.at().isBefore(intakeUntil) || answer.ok()) {
                continue;
            }
            if (!answer.failedByApi()) {
                unanswered++;
            } else if (mark.broker() && answer.shed()) {
                shed++;
            } else if (explainedBy.stream()
                    .noneMatch(db -> !answer.at().isBefore(db.at())
                            && answer.at().isBefore(databaseExplainsUntil(db, intake)))) {
                failed++;
                lastFailed = answer.at();
            }
        }
        Duration intakeBack = Duration.ZERO;
        if (lastFailed != null) {
            intakeBack = null;
            for (IntakeAnswer answer : intake) {
                if (answer.ok() && answer.at().isAfter(lastFailed)) {
                    intakeBack = Duration.between(mark.at(), answer.at());
                    break;
                }
            }
        }
        // The broker's view before the fault: consumers of the work queue and connections per process.
        BrokerSample before = null;
        List<BrokerSample> during = new ArrayList<>();
        for (BrokerSample sample : broker) {
            if (sample.at().isBefore(mark.at())) {
                before = sample;
            } else if (sample.at().isBefore(until)) {
                during.add(sample);
            }
        }
        // Workers that were running throughout: each consuming again, the queue's consumers back to their count
        // less the restarted workers' share.
        List<String> consumingBefore =
                before == null ? List.of() : before.watch().servicesWith(CONSUMER_CONNECTION);
        List<String> kept =
                consumingBefore.stream().filter(w -> !restarted.contains(w)).toList();
        int consumersExpected =
                consumingBefore.isEmpty() ? 0 : consumers(before.watch()) * kept.size() / consumingBefore.size();
        Duration workersBack = back(
                mark,
                during,
                w -> consumers(w) >= consumersExpected
                        && w.servicesWith(CONSUMER_CONNECTION).containsAll(kept));
        Duration membersBack = back(mark, during, w -> {
            Facts.QueueState q = w.queues().get(Checker.WORK_QUEUE);
            return q != null && q.online() >= 3 && q.members() >= 3;
        });
        // Connections: none lost (each process holds at least as many as before the fault; a process the
        // fault caught between two connections, 0 before, may hold more after) and none leaked (no process
        // holds two connections of one name: a replaced connection whose old one was never closed).
        String connections = "no sample";
        boolean connectionsBack = true;
        boolean connectionsLeaked = false;
        // Compared on the last sample taken two heartbeats after the fault ended: one taken while it was still
        // closing connections, node by node, counts connections between their close and their replacement.
        Instant settledFrom = mark.ended().plus(CONNECTIONS_SETTLE);
        List<BrokerSample> settled =
                during.stream().filter(b -> !b.at().isBefore(settledFrom)).toList();
        if (before != null && !during.isEmpty() && settled.isEmpty()) {
            connections = "no sample " + CONNECTIONS_SETTLE.toSeconds() + " s after the fault ended";
        }
        if (before != null && !settled.isEmpty()) {
            Facts.Watch last = settled.get(settled.size() - 1).watch();
            Map<String, Integer> was = runningThroughout(before.watch().connectionsPerService(), restarted);
            // A connection lost stays lost: it must be missing from the last two samples. One listing can miss
            // a node's connections (rabbitmqctl list_connections while a restarted node boots; clustered run
            // 16: api-2 at 0 in the last sample while its log shows it subscribed again 2 s after the kill).
            Map<String, Integer> now = new LinkedHashMap<>(runningThroughout(last.connectionsPerService(), restarted));
            if (settled.size() >= 2) {
                runningThroughout(settled.get(settled.size() - 2).watch().connectionsPerService(), restarted)
                        .forEach((service, count) -> now.merge(service, count, Math::max));
            }
            Map<String, String> lines = new LinkedHashMap<>();
            for (String service : was.keySet()) {
                int a = was.get(service);
                int b = now.getOrDefault(service, 0);
                if (b < a) {
                    lines.put(service, a + "→" + b);
                    connectionsBack = false;
                }
            }
            for (String leaked : last.servicesHoldingTwoOfOneName()) {
                if (now.containsKey(leaked)) {
                    lines.put(leaked, "two connections of one name: " + now.get(leaked));
                    connectionsBack = false;
                    connectionsLeaked = true;
                }
            }
            connections = lines.isEmpty() ? "none lost or leaked " + now : lines.toString();
        }
        Instant windowEnd = until;
        boolean databaseFaultDuring = explainedBy.stream()
                .anyMatch(db -> db.at().isBefore(windowEnd)
                        && databaseExplainsUntil(db, intake).isAfter(mark.at()));
        return new Healed(
                mark,
                Duration.between(mark.at(), until),
                databaseFaultDuring,
                Set.copyOf(restarted),
                failed,
                shed,
                unanswered,
                !during.isEmpty(),
                intakeBack,
                workersBack,
                membersBack,
                connections,
                connectionsBack,
                connectionsLeaked);
    }

    /** Connections per process, without those of restarted processes and of processes gone (not yet dropped). */
    private static Map<String, Integer> runningThroughout(Map<String, Integer> perService, Set<String> restarted) {
        Map<String, Integer> out = new java.util.TreeMap<>(perService);
        out.keySet().removeIf(service -> restarted.contains(service) || service.equals(Facts.GONE));
        return out;
    }

    private static int consumers(Facts.Watch watch) {
        Facts.QueueState q = watch.queues().get(Checker.WORK_QUEUE);
        return q == null ? 0 : q.consumers();
    }

    /** From the fault to the first good sample after the last bad one (zero when none was bad; null: never good again). */
    private static Duration back(Mark mark, List<BrokerSample> during, java.util.function.Predicate<Facts.Watch> good) {
        int lastBad = -1;
        for (int i = 0; i < during.size(); i++) {
            if (!good.test(during.get(i).watch())) {
                lastBad = i;
            }
        }
        if (lastBad < 0) {
            return Duration.ZERO;
        }
        if (lastBad + 1 >= during.size()) {
            return null;
        }
        return Duration.between(mark.at(), during.get(lastBad + 1).at());
    }

    /** Per process, the longest time it was not ready while its readiness named the broker as the reason. */
    Map<String, Duration> longestBrokerNotReady() {
        return longestBrokerNotReady(List.copyOf(readiness));
    }

    static Map<String, Duration> longestBrokerNotReady(List<Readiness> samples) {
        Map<String, Duration> longest = new LinkedHashMap<>();
        Map<String, Instant> since = new LinkedHashMap<>();
        for (Readiness r : samples) {
            longest.putIfAbsent(r.process(), Duration.ZERO);
            if (!r.ready() && r.brokerDown()) {
                since.putIfAbsent(r.process(), r.at());
                Duration span = Duration.between(since.get(r.process()), r.at());
                if (span.compareTo(longest.get(r.process())) > 0) {
                    longest.put(r.process(), span);
                }
            } else {
                since.remove(r.process());
            }
        }
        return longest;
    }

    static String seconds(Duration d) {
        return d == null ? "**not back**" : String.format("%.1f s", d.toMillis() / 1000.0);
    }

    /**
     * The report's "Clustered: recovery per fault" section; adds a line to {@code violations} for each
     * enforced check that failed. Enforced: no 5xx to POST /jobs through any broker fault ({@link #finalMembers}
     * checks the work queue's members after the drain), no api not ready over 10 s because of the broker, every worker
     * consuming again within 15 s of a node's death, no broker connection of a process lost or leaked.
     */
    String render(List<String> violations) {
        List<Healed> all = healed();
        Map<String, Duration> notReady = longestBrokerNotReady();
        StringBuilder out = new StringBuilder("\n## Clustered: recovery per fault\n\n");
        out.append("Each fault's broker samples run until a minute after it was undone or until the next fault hit,"
                + " whichever is first. ");
        out.append("Broker samples (`ctl mq-watch`) every ")
                .append(brokerEvery.toSeconds())
                .append(" s, so the worker and member figures are that coarse; readiness every 0.5 s.\n\n");
        out.append("POST /jobs 5xx: answers of the api from the fault until " + INTAKE_TAIL.toSeconds()
                + " s after it was undone (for a broker fault, not while a database fault was under way or in its "
                + DATABASE_TAIL.toSeconds()
                + " s tail, or until intake answered 2xx again after it), except 503 server-busy; shed: the 503"
                + " server-busy answers during a broker fault, which the api gives only when PostgreSQL had no"
                + " connection for it in time or was away, or past its own capacity bounds, never for the broker"
                + " (reported only); unanswered: no answer at all (the process was down: a kill or a rollout),"
                + " reported only.\n\n");
        out.append("Restarted: processes the soak had stopped (a kill, a rollout) and that were not ready again at"
                + " some time from the fault until a minute after it was undone; the worker and connection figures"
                + " leave them out.\n\n");
        out.append("| at | fault | POST /jobs 5xx | shed | unanswered | intake 2xx again | every worker consuming again"
                + " | jobs.attempts 3 members again | broker connections per process | restarted |\n");
        out.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n");
        for (Healed h : all) {
            out.append(String.format(
                    "| %s | %s | %d | %d | %d | %s | %s | %s | %s | %s |%n",
                    h.mark().at(),
                    h.mark().label().replace("|", "/"),
                    h.failedIntake(),
                    h.shedIntake(),
                    h.unanswered(),
                    seconds(h.intake()),
                    h.sampled() ? seconds(h.workers()) : "no sample",
                    h.sampled() ? seconds(h.members()) : "no sample",
                    h.connections().replace("|", "/"),
                    h.restarted().isEmpty() ? "none" : String.join(", ", h.restarted())));
            String what = h.mark().label() + " at " + h.mark().at();
            if (h.mark().broker() && h.failedIntake() > 0) {
                violations.add("POST /jobs answered 5xx " + h.failedIntake() + " times after: " + what);
            }
        }
        out.append(
                        "\nLongest time each process was not ready with its readiness naming the broker (bound for the api: ")
                .append(API_NOT_READY_BOUND.toSeconds())
                .append(" s): ")
                .append(notReady.entrySet().stream()
                        .map(e -> e.getKey() + " " + seconds(e.getValue()))
                        .toList())
                .append("\n\nIssue 29's bounds on the services (")
                .append("each fails the run")
                .append("):\n\n");
        List<String> bounds = new ArrayList<>();
        notReady.forEach((process, longest) -> {
            if (process.startsWith("api-") && longest.compareTo(API_NOT_READY_BOUND) > 0) {
                bounds.add(process + " not ready for " + seconds(longest) + " because of the broker (bound "
                        + API_NOT_READY_BOUND.toSeconds() + " s)");
            }
        });
        all.forEach(h -> serviceBounds(h, h.mark().label() + " at " + h.mark().at(), bounds));
        if (bounds.isEmpty()) {
            out.append("- all held\n");
        }
        bounds.forEach(line -> out.append("- ").append(line).append('\n'));
        violations.addAll(bounds);
        return out.toString();
    }

    /**
     * After the drain: the work queue has its three members, all online. Per fault the figure is reported only:
     * faults overlap (a node stopped right after another was killed), so "not back within a minute of this
     * fault" can be the next fault's doing; at the end nothing else is under way.
     */
    void finalMembers(List<String> violations) {
        try {
            Facts.QueueState q = ctl.watch().queues().get(Checker.WORK_QUEUE);
            if (q == null || q.members() < 3 || q.online() < 3) {
                violations.add(Checker.WORK_QUEUE + " after the drain: " + (q == null ? "missing" : q)
                        + " (three members, all online, expected)");
            }
        } catch (RuntimeException e) {
            violations.add("the broker could not be asked for " + Checker.WORK_QUEUE + "'s members after the drain: "
                    + e.getMessage());
        }
    }

    private static void serviceBounds(Healed h, String what, List<String> out) {
        if (!h.sampled()) {
            return;
        }
        // Not back when the next fault hit, sooner than the bound: this fault's figure says nothing.
        boolean cutBeforeTheBound = h.workers() == null && h.watched().compareTo(WORKERS_BOUND) <= 0;
        if (h.mark().nodeDeath()
                && !cutBeforeTheBound
                && !h.databaseFaultDuring()
                && (h.workers() == null || h.workers().compareTo(WORKERS_BOUND) > 0)) {
            out.add("workers consuming again " + seconds(h.workers()) + " after: " + what + " (bound "
                    + WORKERS_BOUND.toSeconds() + " s)");
        }
        // A connection lost while a database fault was under way may be one opened on use: the api's relay
        // publishes only what the database gives it (clustered run 16: close_all_connections during a
        // failover, api-2 and two workers at 0 until the database came back). A leak is never the database's.
        if (h.mark().broker() && (h.connectionsLeaked() || !h.connectionsBack() && !h.databaseFaultDuring())) {
            out.add("broker connections of a process lost or leaked after: " + what + ": " + h.connections());
        }
    }
}
