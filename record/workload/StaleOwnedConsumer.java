// A KIP-848 consumer (Apache Kafka's Java KafkaConsumer, group.protocol=consumer, the range
// assignor) for the stale-owned-partitions finding (docs/kafka.md, record/workload/stale_owned.py):
// one file, run by Java 17's source launcher with Kafka's jars from groupspec's cache.
//
//   consume BOOTSTRAP GROUP TOPIC [--hold-first]
//       Subscribes to TOPIC and polls until stdin closes. With --hold-first its first
//       onPartitionsAssigned with partitions does not return until a line arrives on stdin, so
//       the consumer's reconciliation stays in progress as long as the caller wants. JSON lines on
//       stdout, each with "t": System.nanoTime() (CLOCK_MONOTONIC, comparable across processes):
//       {"ev": "assigning", "ps": [...]} when onPartitionsAssigned starts, {"ev": "assigned",
//       "ps": [...]} when it returns, {"ev": "revoked", "ps": [...]} from onPartitionsRevoked,
//       {"ev": "lost", "ps": [...]} from onPartitionsLost.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

public class StaleOwnedConsumer {
    static synchronized void say(String event, Collection<TopicPartition> partitions) {
        List<Integer> numbers = new ArrayList<>();
        for (TopicPartition tp : partitions) numbers.add(tp.partition());
        Collections.sort(numbers);
        System.out.println("{\"ev\": \"" + event + "\", \"ps\": " + numbers + ", \"t\": "
            + System.nanoTime() + "}");
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 4 || !args[0].equals("consume")) {
            System.err.println("usage: consume BOOTSTRAP GROUP TOPIC [--hold-first]");
            System.exit(2);
        }
        boolean holdFirst = args.length > 4 && args[4].equals("--hold-first");
        Properties props = new Properties();
        props.put("bootstrap.servers", args[1]);
        props.put("group.id", args[2]);
        props.put("group.protocol", "consumer");
        props.put("group.remote.assignor", "range");
        props.put("enable.auto.commit", "false");
        props.put("key.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        props.put("value.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        CountDownLatch released = new CountDownLatch(1);
        AtomicBoolean closing = new AtomicBoolean(false);
        // stdin: the first line releases the held callback; its end closes the consumer.
        Thread reader = new Thread(() -> {
            try {
                if (stdin.readLine() != null) {
                    released.countDown();
                    while (stdin.readLine() != null) { }
                }
            } catch (Exception e) {
                // stdin broken: close as at its end
            }
            released.countDown();
            closing.set(true);
        });
        reader.setDaemon(true);
        reader.start();
        AtomicBoolean held = new AtomicBoolean(!holdFirst);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            consumer.subscribe(List.of(args[3]), new ConsumerRebalanceListener() {
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                    say("revoked", partitions);
                }
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                    say("assigning", partitions);
                    if (!partitions.isEmpty() && !held.getAndSet(true)) {
                        try {
                            released.await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    say("assigned", partitions);
                }
                public void onPartitionsLost(Collection<TopicPartition> partitions) {
                    say("lost", partitions);
                }
            });
            while (!closing.get()) {
                consumer.poll(Duration.ofMillis(100));
            }
        }
    }
}
