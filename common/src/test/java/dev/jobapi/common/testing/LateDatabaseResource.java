package dev.jobapi.common.testing;

import java.net.Socket;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A proxy between the application under test and its PostgreSQL that answers its first {@link
 * #AWAY} connections by closing them (a database that is away: a failover, a primary restarting),
 * then forwards. The application is started while it is away; counted in connections, not
 * seconds, so a slow start-up cannot miss the outage.
 */
public class LateDatabaseResource extends DatabaseProxyResource {

    public static final int AWAY = 3;
    private static final AtomicInteger turnedAway = new AtomicInteger();

    /** Connections the proxy closed while the database was away. */
    public static int turnedAway() {
        return turnedAway.get();
    }

    @Override
    boolean admit(Socket client) {
        return turnedAway.getAndUpdate(n -> n < AWAY ? n + 1 : n) >= AWAY;
    }
}
