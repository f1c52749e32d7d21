package dev.jobapi.worker.apply;

import dev.jobapi.worker.config.WorkerConfig;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.io.File;

/** Chooses the applier named by {@code jobapi.apply.mode}. */
public class Appliers {

    @Produces
    @Singleton
    Applier applier(WorkerConfig config) {
        return switch (config.apply().mode()) {
            case "git" -> new GitApplier(
                    new File(config.apply().git().repository()),
                    config.apply().git().branchPrefix());
            case "store" -> new StoreApplier();
            default -> throw new IllegalArgumentException("jobapi.apply.mode must be 'git' or 'store', not '"
                    + config.apply().mode() + "'");
        };
    }
}
