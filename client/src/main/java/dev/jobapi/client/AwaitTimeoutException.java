package dev.jobapi.client;

import dev.jobapi.client.model.Job;

/** The job did not reach a terminal state in the time given; {@link #lastSeen()} is where it was. */
public class AwaitTimeoutException extends RuntimeException {

    private final transient Job lastSeen;

    AwaitTimeoutException(Job lastSeen) {
        super("job " + lastSeen.id() + " still " + lastSeen.state().wireName());
        this.lastSeen = lastSeen;
    }

    public Job lastSeen() {
        return lastSeen;
    }
}
