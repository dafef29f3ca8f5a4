// Apache Kafka's own client-side assignors (RangeAssignor, RoundRobinAssignor, StickyAssignor,
// CooperativeStickyAssignor, from kafka-clients) over JSON lines, for groupspec's assignor
// differential (oracle/assignor/kafka_java.py, docs/assignors.md). One file, run by Java 17's
// source launcher with kafka-clients and Jackson (both in the jars groupspec caches for
// Kafka's broker) on the class path:
//
//   java -cp JARS KafkaAssignors.java
//
// Each line on stdin is one group as the leader sees it:
//   {"assignor": "range", "partitions": {"t0": 3, ...},
//    "members": [{"id": "m1", "topics": ["t0"], "owned": [["t0", 1]], "generation": 4,
//                 "instance": "i1" or null, "user_data": BASE64 or null}, ...]}
// and each answer one line on stdout:
//   {"assignment": {"m1": [["t0", 0], ...], ...}}, or {"error": "ExceptionClass: message"}.
// The group is handed over as the consumer's leader hands it (ConsumerCoordinator.
// onLeaderElected): a HashMap of member id to Subscription, the instance id set on each, the
// metadata as a Cluster; a fresh assignor instance per group (no state carried over).

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

public class KafkaAssignors {
    static final Map<String, Supplier<ConsumerPartitionAssignor>> ASSIGNORS = Map.of(
        "range", RangeAssignor::new,
        "roundrobin", RoundRobinAssignor::new,
        "sticky", StickyAssignor::new,
        "cooperative-sticky", CooperativeStickyAssignor::new);
    static final Node BROKER = new Node(0, "localhost", 9092);

    public static void main(String[] args) throws Exception {
        ObjectMapper json = new ObjectMapper();
        // Answers go to the real stdout; anything a library prints goes to stderr instead.
        PrintStream answers = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        System.setOut(System.err);
        BufferedReader lines = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = lines.readLine()) != null) {
            ObjectNode answer = json.createObjectNode();
            try {
                answer.set("assignment", assign(json, json.readTree(line)));
            } catch (Exception e) {
                answer.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
            }
            answers.println(json.writeValueAsString(answer));
            answers.flush();
        }
    }

    static ObjectNode assign(ObjectMapper json, JsonNode group) {
        String name = group.get("assignor").asText();
        Supplier<ConsumerPartitionAssignor> make = ASSIGNORS.get(name);
        if (make == null) {
            throw new IllegalArgumentException("unknown assignor " + name + "; known: " + ASSIGNORS.keySet());
        }
        List<PartitionInfo> partitions = new ArrayList<>();
        Iterator<Map.Entry<String, JsonNode>> topics = group.get("partitions").fields();
        while (topics.hasNext()) {
            Map.Entry<String, JsonNode> topic = topics.next();
            for (int number = 0; number < topic.getValue().asInt(); number++) {
                Node[] replicas = {BROKER};
                partitions.add(new PartitionInfo(topic.getKey(), number, BROKER, replicas, replicas));
            }
        }
        Cluster metadata = new Cluster("groupspec", List.of(BROKER), partitions, new HashSet<>(), new HashSet<>());
        Map<String, Subscription> subscriptions = new HashMap<>();
        for (JsonNode member : group.get("members")) {
            List<String> subscribed = new ArrayList<>();
            member.get("topics").forEach(topic -> subscribed.add(topic.asText()));
            List<TopicPartition> owned = new ArrayList<>();
            member.get("owned").forEach(tp -> owned.add(new TopicPartition(tp.get(0).asText(), tp.get(1).asInt())));
            JsonNode userData = member.get("user_data");
            ByteBuffer data = userData == null || userData.isNull()
                ? null : ByteBuffer.wrap(Base64.getDecoder().decode(userData.asText()));
            Subscription subscription = new Subscription(
                subscribed, data, owned, member.get("generation").asInt(), Optional.empty());
            JsonNode instance = member.get("instance");
            subscription.setGroupInstanceId(
                instance == null || instance.isNull() ? Optional.empty() : Optional.of(instance.asText()));
            subscriptions.put(member.get("id").asText(), subscription);
        }
        Map<String, ConsumerPartitionAssignor.Assignment> assignments =
            make.get().assign(metadata, new GroupSubscription(subscriptions)).groupAssignment();
        ObjectNode result = json.createObjectNode();
        assignments.forEach((memberId, assignment) -> {
            ArrayNode given = result.putArray(memberId);
            for (TopicPartition tp : assignment.partitions()) {
                given.addArray().add(tp.topic()).add(tp.partition());
            }
        });
        return result;
    }
}
