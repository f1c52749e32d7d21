package dev.jobapi.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class HotFramesTest {

    private static final List<List<String>> STACKS = List.of(
            List.of(
                    "java.util.HashMap.getNode",
                    "org.hibernate.Loader.load",
                    "org.hibernate.Session.find",
                    "dev.jobapi.worker.service.ClaimStep.decide",
                    "dev.jobapi.worker.service.AttemptSteps.run"),
            List.of(
                    "org.postgresql.core.PGStream.receive",
                    "dev.jobapi.worker.service.RecordStep.record",
                    "dev.jobapi.worker.service.RecordStep_ClientProxy.record",
                    "dev.jobapi.worker.service.AttemptSteps.run"),
            List.of("com.fasterxml.jackson.core.JsonParser.nextToken", "java.lang.Thread.run"),
            List.of("java.lang.String.hashCode", "java.lang.Thread.run"));

    @Test
    void selfTimeCountsTheTopFrameCutAtTheRowsAsked() {
        String tables = new HotFrames(STACKS).markdown(2);

        assertTrue(tables.startsWith("4 execution samples"), tables);
        // Four methods on top once each; sorted by share, then by name, the first two are listed.
        assertTrue(tables.contains("| 25.0% | `com.fasterxml.jackson.core.JsonParser.nextToken` |"), tables);
        assertTrue(tables.contains("| 25.0% | `java.lang.String.hashCode` |"), tables);
        assertFalse(tables.contains("`java.util.HashMap.getNode`"), tables);
    }

    @Test
    void aSampleGoesToTheLibraryOfItsTopmostFrameOutsideTheJdk() {
        String tables = new HotFrames(STACKS).markdown(10);

        // HashMap.getNode called by Hibernate is Hibernate's time.
        assertTrue(tables.contains("| 25.0% | `Hibernate ORM` |"), tables);
        assertTrue(tables.contains("| 25.0% | `PostgreSQL JDBC` |"), tables);
        assertTrue(tables.contains("| 25.0% | `Jackson` |"), tables);
        assertTrue(tables.contains("| 25.0% | `JDK` |"), tables);
    }

    @Test
    void ourMethodsCountOncePerSampleWhereverTheyAreOnTheStack() {
        String tables = new HotFrames(STACKS).markdown(10);

        assertTrue(tables.contains("| 50.0% | `dev.jobapi.worker.service.AttemptSteps.run` |"), tables);
        assertTrue(tables.contains("| 25.0% | `dev.jobapi.worker.service.ClaimStep.decide` |"), tables);
        assertTrue(tables.contains("| 25.0% | `dev.jobapi.worker.service.RecordStep.record` |"), tables);
        // A CDI proxy's frame is the method below it again.
        assertFalse(tables.contains("RecordStep_ClientProxy"), tables);
    }

    @Test
    void namesALibraryByItsMostSpecificPrefix() {
        assertEquals("ArC (CDI)", HotFrames.library("io.quarkus.arc.impl.ClientProxies.get"));
        assertEquals("Quarkus (other)", HotFrames.library("io.quarkus.runtime.Application.start"));
        assertEquals("other", HotFrames.library("org.example.Thing.run"));
    }
}
