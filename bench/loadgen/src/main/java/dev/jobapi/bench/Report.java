package dev.jobapi.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * bench/run's arithmetic and tables, kept out of the shell: the script runs the steps and records
 * what they measured; everything computed from that is computed here.
 *
 * <pre>
 *   Report results --observations FILE --cpu FILE --machine FILE --command C --started S --finished F
 *                  --kind full|smoke [--analysis FILE]
 *       prints bench/RESULTS.md (see {@link Results}) from the observations bench/run recorded
 *   Report growth-rate OBSERVATIONS
 *       prints the growth steps' fixed rate, from the fresh-key throughput the run measured
 *   Report cpu --label L --before FILE --after FILE --jobs N --elapsed-ms MS --hz HZ [--process NAME=PID]...
 *       prints one "cpu ..." line: CPU ms per job and % of a core per process (see {@link CpuSplit})
 *   Report cpu-table FILE        the "cpu ..." lines of FILE as a Markdown table
 *   Report hot FILE.jfr [TOP]    the hottest methods and libraries of a JFR recording (see {@link HotFrames})
 * </pre>
 */
public final class Report {

    private Report() {}

    public static void main(String[] args) throws IOException {
        if (args.length == 0) {
            usage("no command");
        }
        switch (args[0]) {
            case "results" -> System.out.print(results(options(args)));
            case "growth-rate" -> System.out.println(
                    new Results(Observation.read(Path.of(argument(args, 1))), Map.of()).growthRate());
            case "cpu" -> System.out.println(cpu(args).line());
            case "cpu-table" -> System.out.print(cpuTable(readCpu(Path.of(argument(args, 1)))));
            case "hot" -> System.out.print(HotFrames.of(Path.of(argument(args, 1)))
                    .markdown(args.length > 2 ? Integer.parseInt(args[2]) : 25));
            default -> usage("unknown command " + args[0]);
        }
    }

    private static String results(Map<String, String> options) throws IOException {
        for (String required :
                List.of("--observations", "--cpu", "--machine", "--command", "--started", "--finished", "--kind")) {
            if (!options.containsKey(required)) {
                usage("results needs " + required);
            }
        }
        Optional<Path> analysis =
                Optional.ofNullable(options.get("--analysis")).map(Path::of).filter(Files::exists);
        Results.Run run = new Results.Run(
                options.get("--command"),
                options.get("--kind").equals("smoke"),
                options.get("--started"),
                options.get("--finished"),
                Files.readString(Path.of(options.get("--machine"))),
                analysis.isPresent() ? Optional.of(Files.readString(analysis.get())) : Optional.empty());
        return new Results(
                        Observation.read(Path.of(options.get("--observations"))),
                        readCpu(Path.of(options.get("--cpu"))))
                .markdown(run);
    }

    /** "--name value" pairs after the command. */
    private static Map<String, String> options(String[] args) {
        Map<String, String> options = new LinkedHashMap<>();
        for (int i = 1; i < args.length; i += 2) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                usage(args[0] + ": expected --name value pairs");
            }
            options.put(args[i], args[i + 1]);
        }
        return options;
    }

    private static CpuSplit cpu(String[] args) throws IOException {
        Map<String, String> options = new LinkedHashMap<>();
        Map<String, String> started = new LinkedHashMap<>();
        for (int i = 1; i + 1 < args.length; i += 2) {
            if (args[i].equals("--process")) {
                String[] nameAndPid = args[i + 1].split("=", 2);
                started.put(nameAndPid[1], nameAndPid[0]);
            } else {
                options.put(args[i], args[i + 1]);
            }
        }
        for (String required : List.of("--label", "--before", "--after", "--jobs", "--elapsed-ms", "--hz")) {
            if (!options.containsKey(required)) {
                usage("cpu needs " + required);
            }
        }
        return CpuSplit.of(
                options.get("--label"),
                Path.of(options.get("--before")),
                Path.of(options.get("--after")),
                Long.parseLong(options.get("--jobs")),
                Long.parseLong(options.get("--elapsed-ms")) / 1000.0,
                started,
                Integer.parseInt(options.get("--hz")));
    }

    /** One row per step; each cell "ms CPU per job (% of one core)". */
    static String cpuTable(Map<String, CpuSplit> splits) {
        Set<String> names = new LinkedHashSet<>();
        splits.values().forEach(s -> names.addAll(s.msPerJob().keySet()));
        List<String> columns = CpuSplit.ordered(names);
        StringBuilder table = new StringBuilder("| step | jobs | seconds | machine busy |");
        columns.forEach(name -> table.append(' ').append(name).append(" |"));
        table.append("\n| --- | --- | --- | --- |");
        columns.forEach(name -> table.append(" --- |"));
        table.append('\n');
        for (CpuSplit split : splits.values()) {
            table.append(String.format(
                    Locale.ROOT,
                    "| %s | %d | %.1f | %.0f%% |",
                    split.label(),
                    split.jobs(),
                    split.seconds(),
                    split.busyPercent()));
            for (String name : columns) {
                Double ms = split.msPerJob().get(name);
                table.append(
                        ms == null
                                ? " - |"
                                : String.format(
                                        Locale.ROOT,
                                        " %.2f (%.0f%%) |",
                                        ms,
                                        split.percentOfCore().get(name)));
            }
            table.append('\n');
        }
        return table.toString();
    }

    private static Map<String, CpuSplit> readCpu(Path file) throws IOException {
        Map<String, CpuSplit> splits = new LinkedHashMap<>();
        if (Files.exists(file)) {
            for (String line : Files.readAllLines(file)) {
                if (line.startsWith("cpu ")) {
                    CpuSplit split = CpuSplit.parse(line);
                    splits.put(split.label(), split);
                }
            }
        }
        return splits;
    }

    private static String argument(String[] args, int index) {
        if (index >= args.length) {
            usage(args[0] + " needs more arguments");
        }
        return args[index];
    }

    private static void usage(String problem) {
        List<String> lines = new ArrayList<>(List.of(
                "Report: " + problem,
                "usage: Report results --observations FILE --cpu FILE --machine FILE --command C --started S"
                        + " --finished F --kind full|smoke [--analysis FILE]",
                "       Report growth-rate OBSERVATIONS",
                "       Report cpu --label L --before FILE --after FILE --jobs N --elapsed-ms MS --hz HZ [--process NAME=PID]...",
                "       Report cpu-table FILE",
                "       Report hot FILE.jfr [TOP]"));
        lines.forEach(System.err::println);
        System.exit(2);
    }
}
