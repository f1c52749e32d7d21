package dev.jobapi.worker.apply;

/**
 * The target refuses this patch for good: its base ref does not exist, it is not a diff, it breaks
 * {@link PatchRules} (a symlink, a submodule, {@code .gitmodules}, a path under {@code .git/}), or it
 * does not apply. Trying again changes nothing, so the winner fails and the job waits for a person; any
 * other exception from an applier is taken as transient and retried.
 */
public class ApplyRefused extends RuntimeException {

    public ApplyRefused(String reason) {
        super(reason);
    }
}
