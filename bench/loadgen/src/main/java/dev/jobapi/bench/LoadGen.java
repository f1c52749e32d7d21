package dev.jobapi.bench;

import java.net.http.HttpClient;
import java.time.Duration;

/**
 * The load generator of bench/run: sends one scenario's requests in a closed or an open loop and
 * prints one result line (see {@link Measurement.Result}). Exit status: 0 when requests were
 * measured and every one got the expected status, 1 otherwise, 2 for a usage error.
 */
public final class LoadGen {

    private LoadGen() {}

    public static void main(String[] args) throws Exception {
        Options options;
        try {
            options = Options.parse(args, System.getenv());
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.err.println(Options.USAGE);
            System.exit(2);
            return;
        }
        HttpClient client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5))
                .build();
        Scenario scenario = Scenario.of(options, client);
        Measurement.Result result = options.mode().equals("open")
                ? OpenLoop.run(options, client, scenario)
                : ClosedLoop.run(options, client, scenario);
        System.out.println(result.line());
        System.exit(result.complete() ? 0 : 1);
    }
}
