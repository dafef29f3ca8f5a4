// A workload client built on Apache Kafka's own Java clients, for `groupspec workload --client
// java`: one file, run by Java 17's source launcher (`java -cp KAFKA_JARS JavaClient.java ...`),
// with Kafka's jars from groupspec's cache (record/kafka/install.py). It speaks what
// consumer.py speaks, so the Python side reads both alike.
//
//   consume BOOTSTRAP GROUP TOPIC [--assignor=range|roundrobin|sticky|cooperative-sticky]
//           [--instance-id=ID] [--group-protocol=classic|consumer] [--remote-assignor=NAME]
//           [--then-topic=TOPIC] [--callbacks]
//       A KafkaConsumer of the classic group protocol (or KIP-848's with
//       --group-protocol=consumer, the broker's assignor then) that commits (commitSync) after every
//       batch it reads. JSON lines on stdout: {"ev": "assigned", "partitions": [...],
//       "topics": [...]} whenever its assignment changes, {"ev": "subscribed", "topics": [...]}
//       when SIGHUP moved its subscription to --then-topic, {"ev": "record", "p", "o", "v"} per record, {"ev": "committed",
//       "offsets": {"p": offset}} after each commit, {"ev": "error", "error"} for an error the
//       client raised (it goes on consuming), {"ev": "closed"} at the end. SIGTERM closes it
//       (a dynamic member leaves the group; a static one does not). With --callbacks it
//       subscribes with a rebalance listener that says {"ev": "gained", "tps": [[topic, p], ...],
//       "t": NANOS} when its callback starts, and on a revocation commits what it read and says
//       {"ev": "released", "tps": ..., "t": NANOS} when its callback ends ({"ev": "released",
//       "lost": true, ...} for lost partitions, without a commit); NANOS is System.nanoTime(),
//       CLOCK_MONOTONIC on Linux, so the times of several processes compare.
//   admin BOOTSTRAP
//       Kafka's Admin client, one command per line on stdin: "describe GROUP", "list",
//       "offsets GROUP"; one JSON line per answer on stdout: {"ok": TEXT} or {"error": TEXT}.

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.HashSet;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;

public class JavaClient {
    static final int SESSION_TIMEOUT_MS = 6000;
    static final int HEARTBEAT_MS = 500;
    static final int MAX_POLL_INTERVAL_MS = 10000;
    static final long ADMIN_TIMEOUT_S = 20;
    static final Map<String, String> ASSIGNORS = Map.of(
        "range", "org.apache.kafka.clients.consumer.RangeAssignor",
        "roundrobin", "org.apache.kafka.clients.consumer.RoundRobinAssignor",
        "sticky", "org.apache.kafka.clients.consumer.StickyAssignor",
        "cooperative-sticky", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");

    public static void main(String[] args) throws Exception {
        if (args.length >= 4 && args[0].equals("consume")) {
            consume(args);
        } else if (args.length == 2 && args[0].equals("admin")) {
            admin(args[1]);
        } else {
            System.err.println("usage: JavaClient consume BOOTSTRAP GROUP TOPIC [--assignor=NAME]"
                + " [--instance-id=ID] | JavaClient admin BOOTSTRAP");
            System.exit(2);
        }
    }

    static String quote(String text) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.append('"').toString();
    }

    static synchronized void emit(String json) {
        System.out.println(json);
        System.out.flush();
    }

    static String option(String[] args, String name, String otherwise) {
        for (int i = 4; i < args.length; i++) {
            if (args[i].startsWith("--" + name + "=")) {
                return args[i].substring(name.length() + 3);
            }
        }
        return otherwise;
    }

    static void consume(String[] args) throws InterruptedException {
        String assignor = option(args, "assignor", "range");
        String instanceId = option(args, "instance-id", "");
        if (!ASSIGNORS.containsKey(assignor)) {
            System.err.println("unknown assignor " + assignor + "; known: " + ASSIGNORS.keySet());
            System.exit(2);
        }
        String protocol = option(args, "group-protocol", "classic");
        Properties config = new Properties();
        config.put("bootstrap.servers", args[1]);
        config.put("group.id", args[2]);
        // The classic protocol (JoinGroup/SyncGroup/Heartbeat) unless --group-protocol=consumer
        // asks for KIP-848's (ConsumerGroupHeartbeat).
        config.put("group.protocol", protocol);
        config.put("client.id", "groupspec-java");
        config.put("key.deserializer", StringDeserializer.class.getName());
        config.put("value.deserializer", StringDeserializer.class.getName());
        config.put("auto.offset.reset", "earliest");
        config.put("enable.auto.commit", "false");
        config.put("max.poll.interval.ms", Integer.toString(MAX_POLL_INTERVAL_MS));
        config.put("metadata.max.age.ms", "2000");
        if (protocol.equals("consumer")) {
            // The broker owns the session, the heartbeat interval and the assignor; the consumer
            // refuses these settings with this protocol. A server assignor may be named.
            String remote = option(args, "remote-assignor", "");
            if (!remote.isEmpty()) {
                config.put("group.remote.assignor", remote);
            }
        } else {
            config.put("session.timeout.ms", Integer.toString(SESSION_TIMEOUT_MS));
            config.put("heartbeat.interval.ms", Integer.toString(HEARTBEAT_MS));
            config.put("partition.assignment.strategy", ASSIGNORS.get(assignor));
        }
        if (!instanceId.isEmpty()) {
            config.put("group.instance.id", instanceId);
        }
        KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config);
        CountDownLatch closed = new CountDownLatch(1);
        AtomicBoolean stopping = new AtomicBoolean(false);
        // SIGTERM runs the shutdown hooks: wake the poll up and wait until the consumer closed.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stopping.set(true);
            consumer.wakeup();
            try {
                closed.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        // SIGHUP moves the subscription to --then-topic (a subscription change).
        String thenTopic = option(args, "then-topic", "");
        AtomicBoolean resubscribe = new AtomicBoolean(false);
        if (!thenTopic.isEmpty()) {
            sun.misc.Signal.handle(new sun.misc.Signal("HUP"), signal -> resubscribe.set(true));
        }
        ConsumerRebalanceListener listener =
            List.of(args).contains("--callbacks") ? new Handover(consumer) : null;
        subscribe(consumer, args[3], listener);
        Set<Integer> current = null;
        Set<String> currentTopics = null;
        try {
            while (!stopping.get()) {
                // First in the loop: a poll or commit that keeps failing (a KafkaException,
                // reported below) must not keep the subscription change waiting.
                if (resubscribe.getAndSet(false)) {
                    subscribe(consumer, thenTopic, listener);
                    emit("{\"ev\": \"subscribed\", \"topics\": [" + quote(thenTopic) + "]}");
                }
                try {
                    ConsumerRecords<String, String> batch = consumer.poll(Duration.ofMillis(200));
                    Set<TopicPartition> read = new HashSet<>();
                    for (ConsumerRecord<String, String> record : batch) {
                        read.add(new TopicPartition(record.topic(), record.partition()));
                        emit("{\"ev\": \"record\", \"p\": " + record.partition() + ", \"o\": "
                            + record.offset() + ", \"v\": " + quote(record.value()) + "}");
                    }
                    if (!read.isEmpty()) {
                        consumer.commitSync();
                        Map<Integer, Long> offsets = new TreeMap<>();
                        for (TopicPartition partition : read) {
                            offsets.put(partition.partition(), consumer.position(partition));
                        }
                        List<String> entries = new ArrayList<>();
                        offsets.forEach((p, o) -> entries.add("\"" + p + "\": " + o));
                        emit("{\"ev\": \"committed\", \"offsets\": {" + String.join(", ", entries) + "}}");
                    }
                } catch (WakeupException e) {
                    break;
                } catch (KafkaException e) {
                    // Reported; the consumer goes on (and rejoins) as an application would.
                    emit("{\"ev\": \"error\", \"error\": " + quote(e.getClass().getSimpleName()
                        + ": " + e.getMessage()) + "}");
                    continue;
                }
                Set<Integer> assigned = new TreeSet<>();
                Set<String> topics = new TreeSet<>();
                for (TopicPartition partition : consumer.assignment()) {
                    assigned.add(partition.partition());
                    topics.add(partition.topic());
                }
                if (!assigned.equals(current) || !topics.equals(currentTopics)) {
                    current = assigned;
                    currentTopics = topics;
                    List<String> names = new ArrayList<>();
                    topics.forEach(topic -> names.add(quote(topic)));
                    emit("{\"ev\": \"assigned\", \"partitions\": " + assigned
                        + ", \"topics\": [" + String.join(", ", names) + "]}");
                }
            }
        } finally {
            consumer.close(Duration.ofSeconds(30));
            emit("{\"ev\": \"closed\"}");
            closed.countDown();
        }
    }

    static void subscribe(KafkaConsumer<String, String> consumer, String topic,
            ConsumerRebalanceListener listener) {
        if (listener == null) {
            consumer.subscribe(List.of(topic));
        } else {
            consumer.subscribe(List.of(topic), listener);
        }
    }

    // The rebalance callbacks of --callbacks: when a partition changes hands, as the callbacks
    // see it, with what was read committed before a revocation completes.
    static final class Handover implements ConsumerRebalanceListener {
        private final KafkaConsumer<String, String> consumer;

        Handover(KafkaConsumer<String, String> consumer) {
            this.consumer = consumer;
        }

        static String pairs(Collection<TopicPartition> partitions) {
            List<String> entries = new ArrayList<>();
            for (TopicPartition partition : partitions) {
                entries.add("[" + quote(partition.topic()) + ", " + partition.partition() + "]");
            }
            return "[" + String.join(", ", entries) + "]";
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            long now = System.nanoTime();
            emit("{\"ev\": \"gained\", \"tps\": " + pairs(partitions) + ", \"t\": " + now + "}");
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            if (!partitions.isEmpty()) {
                consumer.commitSync();
            }
            emit("{\"ev\": \"released\", \"tps\": " + pairs(partitions) + ", \"t\": "
                + System.nanoTime() + "}");
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            emit("{\"ev\": \"released\", \"lost\": true, \"tps\": " + pairs(partitions)
                + ", \"t\": " + System.nanoTime() + "}");
        }
    }

    static void admin(String bootstrap) throws Exception {
        Properties config = new Properties();
        config.put("bootstrap.servers", bootstrap);
        config.put("client.id", "groupspec-java-admin");
        try (Admin admin = Admin.create(config)) {
            BufferedReader commands = new BufferedReader(
                new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = commands.readLine()) != null) {
                String[] words = line.trim().split(" ", 2);
                try {
                    emit("{\"ok\": " + quote(answer(admin, words)) + "}");
                } catch (Exception e) {
                    Throwable cause = e.getCause() != null ? e.getCause() : e;
                    emit("{\"error\": " + quote(cause.getClass().getSimpleName() + ": "
                        + cause.getMessage()) + "}");
                }
            }
        }
    }

    static String answer(Admin admin, String[] words) throws Exception {
        switch (words[0]) {
            case "describe": {
                ConsumerGroupDescription group = admin.describeConsumerGroups(List.of(words[1]))
                    .all().get(ADMIN_TIMEOUT_S, TimeUnit.SECONDS).get(words[1]);
                return group.groupState() + ", " + group.members().size() + " members";
            }
            case "list": {
                Collection<GroupListing> groups = admin.listGroups()
                    .all().get(ADMIN_TIMEOUT_S, TimeUnit.SECONDS);
                Set<String> names = new TreeSet<>();
                groups.forEach(g -> names.add(g.groupId()));
                return names.toString();
            }
            case "offsets": {
                Map<TopicPartition, OffsetAndMetadata> offsets = admin
                    .listConsumerGroupOffsets(words[1]).partitionsToOffsetAndMetadata()
                    .get(ADMIN_TIMEOUT_S, TimeUnit.SECONDS);
                Map<Integer, Long> byPartition = new TreeMap<>();
                offsets.forEach((tp, meta) -> byPartition.put(tp.partition(), meta == null ? -1 : meta.offset()));
                return byPartition.toString();
            }
            default:
                throw new IllegalArgumentException("unknown admin command " + words[0]);
        }
    }
}
