package dev.jobapi.common.testing;

import java.net.Socket;
import java.time.Duration;

/**
 * A proxy between the application under test and its PostgreSQL that, once {@link #slowConnects}
 * is on, holds each new connection for {@link #CONNECT_DELAY} before it reaches the database: a
 * connect that takes its time, as every one does on a loaded machine right after a failover.
 * Connections made before stay fast.
 */
public class SlowConnectDatabaseResource extends DatabaseProxyResource {

    public static final Duration CONNECT_DELAY = Duration.ofMillis(400);
    private static volatile boolean slow;

    /** Whether connections from now on wait {@link #CONNECT_DELAY} before reaching the database. */
    public static void slowConnects(boolean on) {
        slow = on;
    }

    @Override
    boolean admit(Socket client) throws InterruptedException {
        if (slow) {
            Thread.sleep(CONNECT_DELAY.toMillis());
        }
        return true;
    }

    @Override
    public void stop() {
        slow = false;
        super.stop();
    }
}
