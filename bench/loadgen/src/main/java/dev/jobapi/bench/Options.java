package dev.jobapi.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/** The command line of {@link LoadGen}; every option has a default except the token (from the environment). */
record Options(
        String baseUrl,
        String token,
        String scenario,
        String mode,
        int concurrency,
        double rate,
        Duration warmup,
        Duration duration,
        long requests,
        int replayKeys,
        Optional<Path> idsFile,
        String label) {

    static final String USAGE = String.join(
            "\n",
            "usage: BENCH_TOKEN=<jwt> java -jar bench-loadgen.jar [options]",
            "  --url URL           base URL (default http://127.0.0.1:18080)",
            "  --scenario NAME     post-fresh | post-replay | get (default post-fresh)",
            "  --mode MODE         closed (N users, next request when the last answered) |",
            "                      open (fixed --rate; latency from the intended send time) (default closed)",
            "  --concurrency N     closed: users; open: most requests in flight (default 16)",
            "  --rate R            open: requests per second (default 100)",
            "  --warmup SECONDS    sent but not measured (default 5)",
            "  --duration SECONDS  measured (default 15)",
            "  --requests N        closed only: send exactly N requests, no warm-up, then stop (default: by time)",
            "  --replay-keys N     post-replay: jobs created first and then replayed (default 1000)",
            "  --ids-file FILE     get: job ids, one a line",
            "  --label TEXT        first field of the result line");

    static Options parse(String[] args, Map<String, String> env) {
        String baseUrl = "http://127.0.0.1:18080";
        String scenario = "post-fresh";
        String mode = "closed";
        int concurrency = 16;
        double rate = 100;
        double warmup = 5;
        double duration = 15;
        long requests = 0;
        int replayKeys = 1000;
        Path idsFile = null;
        String label = null;
        for (int i = 0; i < args.length; i++) {
            String flag = args[i];
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(flag + " needs a value");
            }
            String value = args[++i];
            switch (flag) {
                case "--url" -> baseUrl = value.replaceAll("/+$", "");
                case "--scenario" -> scenario = value;
                case "--mode" -> mode = value;
                case "--concurrency" -> concurrency = Integer.parseInt(value);
                case "--rate" -> rate = Double.parseDouble(value);
                case "--warmup" -> warmup = Double.parseDouble(value);
                case "--duration" -> duration = Double.parseDouble(value);
                case "--requests" -> requests = Long.parseLong(value);
                case "--replay-keys" -> replayKeys = Integer.parseInt(value);
                case "--ids-file" -> idsFile = Path.of(value);
                case "--label" -> label = value;
                default -> throw new IllegalArgumentException("Unknown option: " + flag);
            }
        }
        String token = env.get("BENCH_TOKEN");
        if (token == null || token.isBlank()) {
            throw new IllegalArgumentException("BENCH_TOKEN is not set (bin/jobctl token --sub <owner> makes one)");
        }
        if (!scenario.matches("post-fresh|post-replay|get")) {
            throw new IllegalArgumentException("Unknown scenario: " + scenario);
        }
        if (!mode.matches("closed|open")) {
            throw new IllegalArgumentException("Unknown mode: " + mode);
        }
        if (scenario.equals("get") && idsFile == null) {
            throw new IllegalArgumentException("--scenario get needs --ids-file");
        }
        if (requests > 0 && mode.equals("open")) {
            throw new IllegalArgumentException("--requests is for the closed loop only");
        }
        if (concurrency < 1 || rate <= 0 || duration <= 0 || warmup < 0 || replayKeys < 1) {
            throw new IllegalArgumentException("--concurrency, --rate, --duration and --replay-keys must be positive");
        }
        return new Options(
                baseUrl,
                token,
                scenario,
                mode,
                concurrency,
                rate,
                seconds(requests > 0 ? 0 : warmup),
                seconds(duration),
                requests,
                replayKeys,
                Optional.ofNullable(idsFile),
                label == null ? scenario + "-" + mode + "-c" + concurrency : label);
    }

    private static Duration seconds(double value) {
        return Duration.ofNanos(Math.round(value * 1e9));
    }
}
