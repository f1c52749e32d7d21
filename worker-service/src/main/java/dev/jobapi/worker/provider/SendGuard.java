package dev.jobapi.worker.provider;

/** Whether the attempt may still be sent again; the pipeline answers it from the database. */
@FunctionalInterface
public interface SendGuard {

    /**
     * Asked before every send after the first; false when the attempt is no longer ours to send
     * (superseded, cancelled, lease lost).
     */
    boolean maySend();
}
