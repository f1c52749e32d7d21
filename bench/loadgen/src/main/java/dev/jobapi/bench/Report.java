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
import java.util.Set;

/**
 * bench/run's arithmetic and tables, kept out of the shell:
 *
 * <pre>
 *   Report cpu --label L --before FILE --after FILE --jobs N --seconds S --hz HZ [--process NAME=PID]...
 *       prints one "cpu ..." line: CPU ms per job and % of a core per process (see {@link CpuSplit})
 *   Report cpu-table FILE        the "cpu ..." lines of FILE as a Markdown table
 *   Report goals FIGURES CPU     the goals table (see {@link Goals}) from FIGURES ("name value" lines)
 *                                and the "cpu ..." lines of CPU
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
            case "cpu" -> System.out.println(cpu(args).line());
            case "cpu-table" -> System.out.print(cpuTable(readCpu(Path.of(argument(args, 1)))));
            case "goals" -> System.out.print(
                    new Goals(readFigures(Path.of(argument(args, 1))), readCpu(Path.of(argument(args, 2)))).markdown());
            case "hot" -> System.out.print(HotFrames.of(Path.of(argument(args, 1)))
                    .markdown(args.length > 2 ? Integer.parseInt(args[2]) : 25));
            default -> usage("unknown command " + args[0]);
        }
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
        for (String required : List.of("--label", "--before", "--after", "--jobs", "--seconds", "--hz")) {
            if (!options.containsKey(required)) {
                usage("cpu needs " + required);
            }
        }
        return CpuSplit.of(
                options.get("--label"),
                Path.of(options.get("--before")),
                Path.of(options.get("--after")),
                Long.parseLong(options.get("--jobs")),
                Double.parseDouble(options.get("--seconds")),
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

    private static Map<String, String> readFigures(Path file) throws IOException {
        Map<String, String> figures = new LinkedHashMap<>();
        for (String line : Files.readAllLines(file)) {
            String[] nameAndValue = line.trim().split("\\s+", 2);
            if (nameAndValue.length == 2) {
                figures.put(nameAndValue[0], nameAndValue[1]);
            }
        }
        return figures;
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
                "usage: Report cpu --label L --before FILE --after FILE --jobs N --seconds S --hz HZ [--process NAME=PID]...",
                "       Report cpu-table FILE",
                "       Report goals FIGURES CPU",
                "       Report hot FILE.jfr [TOP]"));
        lines.forEach(System.err::println);
        System.exit(2);
    }
}
