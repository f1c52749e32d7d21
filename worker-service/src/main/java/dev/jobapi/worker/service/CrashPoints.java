package dev.jobapi.worker.service;

import jakarta.enterprise.context.ApplicationScoped;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Fault injection for the tests and the chaos suite: an armed point throws once, as if the process
 * died there. The message is then not acked and comes back, exactly as after a real crash.
 */
@ApplicationScoped
public class CrashPoints {

    /** Where a simulated crash can happen. */
    public enum Point {
        /** The target has the change; the applied_patch row and the job still say pending. */
        AFTER_APPLY_BEFORE_ACK
    }

    /** Thrown at an armed point. */
    public static class SimulatedCrash extends RuntimeException {
        SimulatedCrash(Point point) {
            super("Simulated crash at " + point);
        }
    }

    private final Set<Point> armed = ConcurrentHashMap.newKeySet();

    public void armOnce(Point point) {
        armed.add(point);
    }

    void hit(Point point) {
        if (armed.remove(point)) {
            throw new SimulatedCrash(point);
        }
    }
}
