package dev.jobapi.worker.apply;

import dev.jobapi.common.apply.ApplyKey;
import dev.jobapi.worker.config.WorkerConfig;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Alternative;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The tests' applier: the configured one, which can be told to crash once right after an apply
 * lands, as if the process died there (the target has the change; applied_patch and the job still
 * say pending). The apply's outcome is then unknown to the worker, as after a real crash: the sweep
 * resumes it and must find the change on the target instead of making it again.
 */
@Alternative
@Priority(1)
@ApplicationScoped
public class CrashingApplier implements Applier {

    /** Thrown where the simulated crash happens. */
    public static class SimulatedCrash extends RuntimeException {
        SimulatedCrash() {
            super("Simulated crash after the apply, before it was marked applied");
        }
    }

    private final Applier configured;
    private final AtomicBoolean crashAfterNextApply = new AtomicBoolean();

    CrashingApplier(WorkerConfig config) {
        this.configured = new Appliers().applier(config);
    }

    public void crashOnceAfterTheNextApply() {
        crashAfterNextApply.set(true);
    }

    @Override
    public String scope(ApplyTarget target) {
        return configured.scope(target);
    }

    @Override
    public Optional<String> findApplied(ApplyKey key, ApplyTarget target) {
        return configured.findApplied(key, target);
    }

    @Override
    public String apply(ApplyKey key, byte[] patch, ApplyTarget target) {
        String ref = configured.apply(key, patch, target);
        if (crashAfterNextApply.getAndSet(false)) {
            throw new SimulatedCrash();
        }
        return ref;
    }

    @Override
    public boolean appliesInTheDatabase() {
        return configured.appliesInTheDatabase();
    }
}
