package dev.jobapi.chaos;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** The answers of {@code chaos/run ctl}'s cluster actions, each parsed here, once ({@link Ctl} asks). */
final class Facts {

    private Facts() {}

    /** The answer's last line: a warning the script printed on its standard error comes first. */
    static String lastLine(String answer) {
        String[] lines = answer.strip().split("\n");
        return lines[lines.length - 1].strip();
    }

    /** "WORD N" (for instance "closed 4"): N. */
    static int count(String answer, String word) {
        String line = lastLine(answer);
        String[] words = line.split("\\s+");
        if (words.length != 2 || !words[0].equals(word) || !words[1].matches("\\d+")) {
            throw new IllegalStateException("chaos/run ctl answered '" + line + "', not '" + word + " N'");
        }
        return Integer.parseInt(words[1]);
    }

    /** "WORD NODE pid P" (for instance "killed 2 pid 4711"): P. */
    static long pid(String answer, String word) {
        String line = lastLine(answer);
        String[] words = line.split("\\s+");
        if (words.length != 4 || !words[0].equals(word) || !words[2].equals("pid") || !words[3].matches("\\d+")) {
            throw new IllegalStateException("chaos/run ctl answered '" + line + "', not '" + word + " NODE pid P'");
        }
        return Long.parseLong(words[3]);
    }

    /** "N partitions [NODE...]" per running node: the nodes each has a partition recorded with. */
    static Map<Integer, List<String>> partitions(String answer) {
        Map<Integer, List<String>> partitions = new TreeMap<>();
        for (String line : answer.strip().split("\n")) {
            String[] words = line.strip().split("\\s+");
            if (words.length < 2 || !words[1].equals("partitions") || !words[0].matches("\\d+")) {
                continue;
            }
            List<String> nodes = new ArrayList<>();
            for (int i = 2; i < words.length; i++) {
                if (!words[i].isBlank()) {
                    nodes.add(words[i]);
                }
            }
            partitions.put(Integer.parseInt(words[0]), nodes);
        }
        return partitions;
    }

    /**
     * A quorum queue as the broker reports it.
     *
     * @param members the nodes it is replicated on
     * @param online those of them that run
     */
    record QueueState(String name, int consumers, int members, int online, String leader) {}

    /** The owner of a connection whose process is no longer running (the broker has not dropped it yet). */
    static final String GONE = "gone";

    /**
     * One AMQP connection of the soak's vhost: the service that owns it (by the pid in its client properties,
     * {@link #GONE} when that process is no longer running), its node, its name.
     */
    record Connection(String service, String node, String name) {}

    /** What {@code ctl mq-watch} answers. */
    record Watch(Map<String, QueueState> queues, List<Connection> connections) {

        static Watch parse(String answer) {
            Map<String, QueueState> queues = new LinkedHashMap<>();
            List<Connection> connections = new ArrayList<>();
            for (String line : answer.strip().split("\n")) {
                String[] w = line.strip().split("\\s+");
                if (w.length == 10
                        && w[0].equals("queue")
                        && w[2].equals("consumers")
                        && w[4].equals("members")
                        && w[6].equals("online")
                        && w[8].equals("leader")) {
                    queues.put(
                            w[1],
                            new QueueState(
                                    w[1],
                                    Integer.parseInt(w[3]),
                                    Integer.parseInt(w[5]),
                                    Integer.parseInt(w[7]),
                                    w[9]));
                } else if (w.length == 4 && w[0].equals("conn")) {
                    connections.add(new Connection(w[1], w[2], w[3]));
                }
            }
            return new Watch(queues, connections);
        }

        /** Connections per service. */
        Map<String, Integer> connectionsPerService() {
            Map<String, Integer> counts = new TreeMap<>();
            connections.forEach(c -> counts.merge(c.service(), 1, Integer::sum));
            return counts;
        }

        /** The services holding two or more connections of one name (one of them leaked). */
        List<String> servicesHoldingTwoOfOneName() {
            Map<String, Integer> perServiceAndName = new TreeMap<>();
            connections.forEach(c -> perServiceAndName.merge(c.service() + " " + c.name(), 1, Integer::sum));
            return perServiceAndName.entrySet().stream()
                    .filter(e -> e.getValue() > 1)
                    .map(e -> e.getKey().substring(0, e.getKey().indexOf(' ')))
                    .distinct()
                    .toList();
        }

        /** The services holding a connection named {@code name} (the worker's consumer connection). */
        List<String> servicesWith(String name) {
            return connections.stream()
                    .filter(c -> c.name().equals(name))
                    .map(Connection::service)
                    .distinct()
                    .sorted()
                    .toList();
        }

        /** Nodes and the services connected to each. */
        Map<String, List<String>> servicesPerNode() {
            Map<String, List<String>> nodes = new TreeMap<>();
            connections.forEach(
                    c -> nodes.computeIfAbsent(c.node(), n -> new ArrayList<>()).add(c.service()));
            return nodes;
        }
    }
}
