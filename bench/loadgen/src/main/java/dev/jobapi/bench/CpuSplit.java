package dev.jobapi.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The CPU one measured step used, per process, from two snapshots bench/run takes of /proc before
 * and after it: each line "pid comm ticks" (utime + stime of the process), and one line "machine
 * machine busy total" from /proc/stat. A process bench/run started is named by its pid; the rest
 * are grouped by what they are: every postgres process (backends, WAL writer, checkpointer) is
 * PostgreSQL, beam.smp is RabbitMQ, anything else is "other" (other people's work on a shared
 * machine shows there).
 *
 * @param label the step
 * @param jobs jobs the step completed
 * @param seconds how long the step ran
 * @param busyPercent how busy the machine was, in % of all its cores
 * @param msPerJob CPU milliseconds per completed job, per process, in a stable order
 * @param percentOfCore CPU used meanwhile, in % of one core, per process
 */
record CpuSplit(
        String label,
        long jobs,
        double seconds,
        double busyPercent,
        Map<String, Double> msPerJob,
        Map<String, Double> percentOfCore) {

    /** Every worker process together: what the goal "worker CPU per job" is about. */
    static final String WORKERS = "workers";

    /** The order columns appear in; names not listed (none today) come after. */
    static final List<String> ORDER =
            List.of("api", WORKERS, "baseline", "fake-provider", "postgres", "rabbitmq", "other");

    /**
     * Reads the snapshots and charges each process's CPU ticks to the completed jobs.
     *
     * @param started pid to name of the processes bench/run started (api, worker-1, fake-provider, ...)
     * @param ticksPerSecond the kernel's clock ticks per second (getconf CLK_TCK)
     */
    static CpuSplit of(
            String label,
            Path before,
            Path after,
            long jobs,
            double seconds,
            Map<String, String> started,
            int ticksPerSecond)
            throws IOException {
        Snapshot first = Snapshot.read(before);
        Snapshot last = Snapshot.read(after);
        Map<String, Long> ticks = new LinkedHashMap<>();
        last.ticks.forEach((pid, now) -> {
            long used = now - first.ticks.getOrDefault(pid, 0L);
            if (used > 0) {
                ticks.merge(nameOf(pid, last.comms.get(pid), started), used, Long::sum);
            }
        });
        long workerTicks = ticks.entrySet().stream()
                .filter(e -> e.getKey().startsWith("worker-"))
                .mapToLong(Map.Entry::getValue)
                .sum();
        if (workerTicks > 0) {
            ticks.put(WORKERS, workerTicks);
        }
        Map<String, Double> msPerJob = new LinkedHashMap<>();
        Map<String, Double> percentOfCore = new LinkedHashMap<>();
        for (String name : ordered(ticks.keySet())) {
            double cpuSeconds = ticks.get(name) / (double) ticksPerSecond;
            msPerJob.put(name, jobs > 0 ? cpuSeconds * 1000 / jobs : Double.NaN);
            percentOfCore.put(name, seconds > 0 ? 100 * cpuSeconds / seconds : Double.NaN);
        }
        long busy = last.machineBusy - first.machineBusy;
        long total = last.machineTotal - first.machineTotal;
        return new CpuSplit(
                label, jobs, seconds, total > 0 ? 100.0 * busy / total : Double.NaN, msPerJob, percentOfCore);
    }

    private static String nameOf(String pid, String comm, Map<String, String> started) {
        if (started.containsKey(pid)) {
            return started.get(pid);
        }
        return switch (comm) {
            case "postgres" -> "postgres";
            case "beam.smp" -> "rabbitmq";
            default -> "other";
        };
    }

    /** The names in column order: api, each worker, the sum of the workers, then the rest. */
    static List<String> ordered(Collection<String> names) {
        return names.stream()
                .sorted((a, b) -> {
                    int ra = rank(a), rb = rank(b);
                    return ra != rb ? Integer.compare(ra, rb) : a.compareTo(b);
                })
                .collect(Collectors.toList());
    }

    private static int rank(String name) {
        // worker-1, worker-2, ... sit just before their sum.
        int index = ORDER.indexOf(name.startsWith("worker-") ? WORKERS : name);
        return 2 * (index < 0 ? ORDER.size() : index) - (name.startsWith("worker-") ? 1 : 0);
    }

    /** One line of key=value pairs, which {@link #parse(String)} reads back. */
    String line() {
        StringBuilder line = new StringBuilder(String.format(
                Locale.ROOT, "cpu label=%s jobs=%d seconds=%.2f busy_pct=%.1f", label, jobs, seconds, busyPercent));
        msPerJob.forEach((name, ms) -> line.append(
                String.format(Locale.ROOT, " ms.%s=%.2f pct.%s=%.1f", name, ms, name, percentOfCore.get(name))));
        return line.toString();
    }

    static CpuSplit parse(String line) {
        Map<String, String> fields = new LinkedHashMap<>();
        for (String pair : line.trim().split(" ")) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
                fields.put(pair.substring(0, eq), pair.substring(eq + 1));
            }
        }
        Map<String, Double> msPerJob = new LinkedHashMap<>();
        Map<String, Double> percentOfCore = new LinkedHashMap<>();
        fields.forEach((key, value) -> {
            if (key.startsWith("ms.")) {
                msPerJob.put(key.substring(3), Double.parseDouble(value));
            } else if (key.startsWith("pct.")) {
                percentOfCore.put(key.substring(4), Double.parseDouble(value));
            }
        });
        return new CpuSplit(
                fields.get("label"),
                Long.parseLong(fields.get("jobs")),
                Double.parseDouble(fields.get("seconds")),
                Double.parseDouble(fields.get("busy_pct")),
                msPerJob,
                percentOfCore);
    }

    /** The ticks of every process in one snapshot file, and the machine's. */
    private record Snapshot(Map<String, Long> ticks, Map<String, String> comms, long machineBusy, long machineTotal) {

        static Snapshot read(Path file) throws IOException {
            Map<String, Long> ticks = new LinkedHashMap<>();
            Map<String, String> comms = new LinkedHashMap<>();
            long busy = 0;
            long total = 0;
            for (String line : Files.readAllLines(file)) {
                String[] f = line.trim().split(" ");
                if (f.length == 4 && f[0].equals("machine")) {
                    busy = Long.parseLong(f[2]);
                    total = Long.parseLong(f[3]);
                } else if (f.length == 3) {
                    ticks.put(f[0], Long.parseLong(f[2]));
                    comms.put(f[0], f[1]);
                }
            }
            return new Snapshot(ticks, comms, busy, total);
        }
    }
}
