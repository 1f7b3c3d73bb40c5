package agentmemory.local;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

import org.codelibs.opensearch.runner.OpenSearchRunner;

/**
 * One OpenSearch node with the k-NN plugin, in this JVM, for the local stack and the tests.
 *
 * <pre>java -cp target/opensearch-node-1.jar:target/lib/*:target/knn/* agentmemory.local.OpenSearchNode DATA_DIR PORT</pre>
 *
 * Data, config and logs live under DATA_DIR and survive a restart. HTTP listens on 127.0.0.1:PORT. The line
 * "ready http://127.0.0.1:PORT" on stdout means the cluster is at least yellow. SIGTERM (or Ctrl-C) closes the
 * node cleanly, flushing its shards.
 */
public final class OpenSearchNode {
    private static final String KNN_PLUGIN = "org.opensearch.knn.plugin.KNNPlugin";

    private OpenSearchNode() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: OpenSearchNode DATA_DIR HTTP_PORT");
            System.exit(2);
        }
        Path dataDir = Path.of(args[0]).toAbsolutePath();
        int httpPort = Integer.parseInt(args[1]);
        Files.createDirectories(dataDir);

        OpenSearchRunner runner = new OpenSearchRunner();
        runner.onBuild((index, settings) -> {
            settings.put("http.port", String.valueOf(httpPort));
            settings.put("network.host", "127.0.0.1");
            // A laptop disk past 85 % full must not turn every index read-only.
            settings.put("cluster.routing.allocation.disk.threshold_enabled", "false");
            // Never discover another local node (its default seed hosts are 127.0.0.1:9300-9305): two stacks, or a
            // stack and a test run, would otherwise join into one cluster and share their indices.
            settings.put("discovery.type", "single-node");
            settings.put("action.auto_create_index", "false");
        });
        runner.build(new OpenSearchRunner.Configs()
                .basePath(dataDir.toString())
                .numOfNode(1)
                .clusterName("agent-memory-local")
                .pluginTypes(KNN_PLUGIN)
                .printOnFailure()
                .build());
        runner.ensureYellow();

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                runner.close();
            } catch (Exception error) {
                System.err.println("closing the node failed: " + error);
            } finally {
                stopped.countDown();
            }
        }));
        System.out.println("ready http://127.0.0.1:" + httpPort);
        System.out.flush();
        stopped.await();
    }
}
