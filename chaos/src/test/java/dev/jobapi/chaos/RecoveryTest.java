package dev.jobapi.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The clustered soak's recovery figures over crafted samples: no broker, no clock. */
class RecoveryTest {

    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    private static Instant at(double seconds) {
        return T0.plusMillis((long) (seconds * 1000));
    }

    private static Recovery.BrokerSample sample(double seconds, int consumers, int online, String... conns) {
        StringBuilder answer = new StringBuilder("queue jobs.attempts consumers " + consumers + " members 3 online "
                + online + " leader chaos-c1@localhost\n");
        for (String conn : conns) {
            answer.append("conn ").append(conn).append('\n');
        }
        return new Recovery.BrokerSample(at(seconds), Facts.Watch.parse(answer.toString()));
    }

    @Test
    void measuresFromTheFaultToTheFirstGoodAnswerAfterTheLastBadOne() {
        Recovery.Mark kill = new Recovery.Mark("leader kill", at(10), at(16), true, true);
        List<Recovery.IntakeAnswer> intake = List.of(
                new Recovery.IntakeAnswer(at(9), 201),
                new Recovery.IntakeAnswer(at(11), 503),
                new Recovery.IntakeAnswer(at(13), 500),
                new Recovery.IntakeAnswer(at(13.5), -1),
                new Recovery.IntakeAnswer(at(14.5), 200));
        String w1 = "worker-1 chaos-c1@localhost jobapi-attempt-consumer";
        String w2 = "worker-2 chaos-c1@localhost jobapi-attempt-consumer";
        List<Recovery.BrokerSample> broker = List.of(
                sample(8, 2, 3, w1, w2),
                sample(12, 1, 2, w1),
                sample(16, 2, 2, w1, w2),
                sample(26, 2, 3, w1, w2, "worker-2 chaos-c2@localhost jobapi-attempt-consumer"));

        Recovery.Healed healed = Recovery.healed(kill, intake, broker, List.of(), Set.of(), null);

        assertThat(healed.failedIntake()).isEqualTo(2);
        assertThat(healed.unanswered()).isEqualTo(1);
        assertThat(healed.sampled()).isTrue();
        assertThat(healed.intake()).isEqualTo(Duration.ofMillis(4500));
        assertThat(healed.workers()).isEqualTo(Duration.ofSeconds(6));
        assertThat(healed.members()).isEqualTo(Duration.ofSeconds(16));
        assertThat(healed.connectionsBack()).isFalse();
        assertThat(healed.connections()).contains("worker-2=two connections of one name");
        assertThat(healed.connectionsLeaked()).isTrue();
    }

    /**
     * A 503 server-busy is the database's (no connection in time) or the api's capacity, never the broker's:
     * beside a broker fault it is reported as shed, not counted against the fault; a 500 still is.
     */
    @Test
    void aServerBusyDuringABrokerFaultIsShedNotTheBrokers() {
        Recovery.Mark kill = new Recovery.Mark("leader kill", at(10), at(16), true, true);
        List<Recovery.IntakeAnswer> intake = List.of(
                new Recovery.IntakeAnswer(at(11), 503, "server-busy"),
                new Recovery.IntakeAnswer(at(12), 503, "server-busy"),
                new Recovery.IntakeAnswer(at(13), 500, "internal"),
                new Recovery.IntakeAnswer(at(14), 201));

        Recovery.Healed healed = Recovery.healed(kill, intake, List.of(), List.of(), Set.of(), null);

        assertThat(healed.shedIntake()).isEqualTo(2);
        assertThat(healed.failedIntake()).isEqualTo(1);
    }

    @Test
    void aConnectionLostIsCountedAndOneRegainedIsNot() {
        Recovery.Mark close = new Recovery.Mark("close", at(10), at(10), true, false);
        String w1 = "worker-1 chaos-c1@localhost jobapi-attempt-consumer";
        String a1 = "api-1 chaos-c2@localhost jobapi-broker-connection";
        Recovery.Healed regained = Recovery.healed(
                close, List.of(), List.of(sample(8, 1, 3, w1), sample(22, 1, 3, w1, a1)), List.of(), Set.of(), null);
        assertThat(regained.connectionsBack()).isTrue();
        // A sample while the fault may still be closing connections is no measure of what came back.
        Recovery.Healed early = Recovery.healed(
                close, List.of(), List.of(sample(8, 1, 3, w1, a1), sample(12, 1, 3, w1)), List.of(), Set.of(), null);
        assertThat(early.connectionsBack()).isTrue();
        assertThat(early.connections()).startsWith("no sample 10 s after");
        Recovery.Healed lost = Recovery.healed(
                close,
                List.of(),
                List.of(sample(8, 1, 3, w1, a1), sample(12, 1, 3, w1, a1), sample(24, 1, 3, w1)),
                List.of(),
                Set.of(),
                null);
        assertThat(lost.connectionsBack()).isFalse();
        assertThat(lost.connections()).contains("api-1=1→0");
        assertThat(lost.connectionsLeaked())
                .as("lost, not leaked: excused while a database fault is under way")
                .isFalse();
    }

    /** A connection missing from one listing only is a listing that missed it, not a connection lost. */
    @Test
    void aConnectionMissingFromTheLastListingAloneIsNotLost() {
        Recovery.Mark kill = new Recovery.Mark("leader kill", at(10), at(10), true, true);
        String w1 = "worker-1 chaos-c1@localhost jobapi-attempt-consumer";
        String a2 = "api-2 chaos-c2@localhost jobapi-broker-connection";
        Recovery.Healed missedOnce = Recovery.healed(
                kill,
                List.of(),
                List.of(sample(8, 1, 3, w1, a2), sample(22, 1, 3, w1, a2), sample(26, 1, 3, w1)),
                List.of(),
                Set.of(),
                null);
        assertThat(missedOnce.connectionsBack()).isTrue();
        Recovery.Healed lostTwice = Recovery.healed(
                kill,
                List.of(),
                List.of(sample(8, 1, 3, w1, a2), sample(22, 1, 3, w1), sample(26, 1, 3, w1)),
                List.of(),
                Set.of(),
                null);
        assertThat(lostTwice.connectionsBack()).isFalse();
        assertThat(lostTwice.connections()).contains("api-2=1→0");
    }

    @Test
    void aFaultNothingNoticedHealedAtOnceAndOneNeverHealedSaysSo() {
        Recovery.Mark close = new Recovery.Mark("close", at(10), at(10), true, false);
        String w1 = "worker-1 chaos-c1@localhost jobapi-attempt-consumer";
        Recovery.Healed quiet = Recovery.healed(
                close,
                List.of(new Recovery.IntakeAnswer(at(11), 201)),
                List.of(sample(8, 1, 3, w1), sample(12, 1, 3, w1)),
                List.of(),
                Set.of(),
                null);
        assertThat(quiet.intake()).isEqualTo(Duration.ZERO);
        assertThat(quiet.workers()).isEqualTo(Duration.ZERO);
        assertThat(quiet.connectionsBack()).isTrue();

        Recovery.Healed never = Recovery.healed(
                close,
                List.of(),
                List.of(sample(8, 1, 3, w1), sample(12, 0, 2), sample(16, 0, 2)),
                List.of(),
                Set.of(),
                null);
        assertThat(never.workers()).isNull();
        assertThat(never.members()).isNull();
        assertThat(Recovery.seconds(never.workers())).isEqualTo("**not back**");
    }

    @Test
    void aFiveHundredWhileTheDatabaseFailsOverIsTheDatabasesNotTheBrokers() {
        Recovery.Mark kill = new Recovery.Mark("leader kill", at(10), at(16), true, true);
        Recovery.Mark failover = new Recovery.Mark("failover", at(5), at(20), false, false);
        List<Recovery.IntakeAnswer> intake = List.of(
                new Recovery.IntakeAnswer(at(12), 500),
                new Recovery.IntakeAnswer(at(38), 201), // intake is back after the failover
                new Recovery.IntakeAnswer(at(39), 500),
                new Recovery.IntakeAnswer(at(40), 201));
        Recovery.Healed healed = Recovery.healed(kill, intake, List.of(), List.of(failover), Set.of(), null);
        assertThat(healed.failedIntake()).isEqualTo(1);
        assertThat(healed.intake()).isEqualTo(Duration.ofSeconds(30));
        assertThat(healed.sampled()).isFalse();
    }

    /** Clustered run 10: the pools refill at their own pace; until intake answers again the 5xx are the database's. */
    @Test
    void aFiveHundredBeforeIntakeIsBackFromADatabaseFaultIsTheDatabasesHoweverLate() {
        Recovery.Mark kill = new Recovery.Mark("worker node kill", at(30), at(42), true, true);
        Recovery.Mark terminated = new Recovery.Mark("pg_terminate_backend", at(5), at(5), false, false);
        List<Recovery.IntakeAnswer> intake = List.of(
                new Recovery.IntakeAnswer(at(31), 503),
                new Recovery.IntakeAnswer(at(34), 503),
                new Recovery.IntakeAnswer(at(35), 201),
                new Recovery.IntakeAnswer(at(36), 503));
        Recovery.Healed healed = Recovery.healed(kill, intake, List.of(), List.of(terminated), Set.of(), null);
        assertThat(healed.failedIntake()).isEqualTo(1); // the one after intake was back at 35 s
        assertThat(Recovery.databaseExplainsUntil(terminated, intake)).isEqualTo(at(35));
        assertThat(Recovery.databaseExplainsUntil(terminated, List.of())).isEqualTo(at(35));
    }

    @Test
    void aWorkerRestartedAroundTheFaultIsLeftOutOfTheWorkerAndConnectionFigures() {
        Recovery.Mark kill = new Recovery.Mark("leader kill", at(10), at(16), true, true);
        List<Recovery.Readiness> probes = List.of(
                new Recovery.Readiness("worker-2", at(4), true, false, true),
                new Recovery.Readiness("worker-2", at(6), false, false, false),
                new Recovery.Readiness("worker-2", at(30), true, false, true),
                new Recovery.Readiness("worker-1", at(6), false, false, false), // slow to answer, not stopped
                new Recovery.Readiness("worker-3", at(2), true, false, true));
        List<Recovery.Stop> stops = List.of(
                new Recovery.Stop("worker-2", at(5)), // stopped before the fault, ready again after it
                new Recovery.Stop("worker-3", at(1)), // stopped and ready again before the fault
                new Recovery.Stop("worker-1", at(200))); // stopped after the window
        Set<String> restarted = Recovery.restarted(kill, stops, probes);
        assertThat(restarted).containsExactly("worker-2");

        String w1 = "worker-1 chaos-c1@localhost jobapi-attempt-consumer";
        String w2 = "worker-2 chaos-c1@localhost jobapi-attempt-consumer";
        List<Recovery.BrokerSample> broker = List.of(
                sample(8, 2, 3, w1, w2),
                sample(12, 0, 3),
                sample(14, 1, 3, w1, "gone chaos-c2@localhost jobapi-attempt-consumer"),
                sample(60, 1, 3, w1));

        Recovery.Healed healed = Recovery.healed(kill, List.of(), broker, List.of(), restarted, null);
        assertThat(healed.workers()).isEqualTo(Duration.ofSeconds(4));
        assertThat(healed.connectionsBack()).isTrue();
        assertThat(healed.restarted()).containsExactly("worker-2");

        Recovery.Healed counted = Recovery.healed(kill, List.of(), broker, List.of(), Set.of(), null);
        assertThat(counted.workers()).isNull();
        assertThat(counted.connectionsBack()).isFalse();

        // The next fault at 13 s cuts the window: what it does to the workers is not this fault's.
        Recovery.Healed cut = Recovery.healed(kill, List.of(), broker, List.of(), Set.of(), at(13));
        assertThat(cut.watched()).isEqualTo(Duration.ofSeconds(3));
        assertThat(cut.workers()).isNull();
    }

    @Test
    void aFaultHitWhileAnEarlierBrokerFaultWasStillActingIsNotMeasured() {
        Recovery.Mark closing = new Recovery.Mark("close_all_connections", at(0), at(30), true, false);
        Recovery.Mark kill = new Recovery.Mark("leader kill", at(4), at(24), true, true);
        Recovery.Mark terminate = new Recovery.Mark("pg_terminate_backend", at(40), at(41), false, false);
        List<Recovery.Mark> sorted = List.of(closing, kill, terminate);

        assertThat(Recovery.interruption(sorted, 0)).isEqualTo(at(4));
        assertThat(Recovery.interruption(sorted, 1))
                .as("the close was still under way")
                .isEqualTo(at(4));
        assertThat(Recovery.interruption(sorted, 2)).isNull();

        Recovery.Mark quickClose = new Recovery.Mark("close_all_connections", at(0), at(1), true, false);
        assertThat(Recovery.interruption(List.of(quickClose, kill, terminate), 1))
                .isEqualTo(at(40));
    }

    @Test
    void countsOnlyNotReadyTimeTheReadinessBlamesOnTheBroker() {
        String brokerDown =
                "{\"status\":\"DOWN\",\"checks\":[{\"name\":\"rabbitmq-attempt-queue\",\"status\":\"DOWN\"},"
                        + "{\"name\":\"Database connections health check\",\"status\":\"UP\"}]}";
        String dbDown = "{\"status\":\"DOWN\",\"checks\":[{\"name\":\"rabbitmq-attempt-queue\",\"status\":\"UP\"}]}";
        assertThat(Recovery.brokerDown(brokerDown)).isTrue();
        assertThat(Recovery.brokerDown(dbDown)).isFalse();
        assertThat(Recovery.brokerDown("not json")).isFalse();

        List<Recovery.Readiness> samples = new ArrayList<>();
        samples.add(new Recovery.Readiness("api-1", at(0), true, false, true));
        samples.add(new Recovery.Readiness("api-1", at(1), false, true, true));
        samples.add(new Recovery.Readiness("api-1", at(13), false, true, true));
        samples.add(new Recovery.Readiness("api-1", at(14), true, false, true));
        samples.add(new Recovery.Readiness("api-2", at(1), false, false, true));
        samples.add(new Recovery.Readiness("api-2", at(30), false, false, true));
        assertThat(Recovery.longestBrokerNotReady(samples))
                .containsEntry("api-1", Duration.ofSeconds(12))
                .containsEntry("api-2", Duration.ZERO);
    }

    @Test
    void theClusterScheduleHasEveryClusterFaultAndIsTheSameForTheSameSeed() {
        List<Faults.Planned> plan = Faults.clusterSchedule(42, Duration.ofMinutes(30));
        assertThat(plan).isEqualTo(Faults.clusterSchedule(42, Duration.ofMinutes(30)));
        assertThat(plan.stream().filter(p -> p.kind() == Faults.Kind.MQ_LEADER_KILL))
                .hasSize(6);
        assertThat(plan.stream().filter(p -> p.kind() == Faults.Kind.MQ_WORKER_NODE_KILL))
                .hasSize(6);
        assertThat(plan.stream().filter(p -> p.kind() == Faults.Kind.MQ_NODE_PAUSE))
                .hasSize(3)
                .allSatisfy(p -> {
                    assertThat(p.process() / 100).isBetween(1, 3);
                    assertThat(p.process() % 100).isBetween(60, 90);
                });
        assertThat(plan.stream().filter(p -> p.kind() == Faults.Kind.PG_FAILOVER))
                .hasSize(3)
                .allSatisfy(p -> assertThat(p.process()).isBetween(30, 60));
        assertThat(plan.stream().filter(p -> p.kind() == Faults.Kind.RABBITMQ_RESTART))
                .singleElement()
                .satisfies(p -> assertThat(p.process()).isBetween(1, 3));
    }
}
