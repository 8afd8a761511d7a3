package dev.heureka.spring.push;

import com.netflix.appinfo.InstanceInfo;
import com.netflix.discovery.converters.EurekaJacksonCodec;
import com.netflix.discovery.shared.Application;
import com.netflix.discovery.shared.Applications;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.netflix.eureka.EurekaServiceInstance;

/**
 * The registry as the push stream tells it: a copy of Eureka's {@link Applications} that the
 * stream's thread replaces with each {@code snapshot} and patches with each {@code delta}, and an
 * immutable index that readers (the DiscoveryClient wrappers) see.
 *
 * <p>The index answers as Spring Cloud Netflix's {@code EurekaDiscoveryClient} answers from the
 * Eureka client's registry: instances by VIP address (any case, a comma-separated VIP address
 * counting for each of its names), only {@code UP} ones when {@code filterOnlyUp}, each as an
 * {@link EurekaServiceInstance}; services as the lower-case names of the applications that have
 * such an instance.
 *
 * <p>The index is {@code null} while the view is not live (never connected, or the stream broke):
 * then callers fall back to Spring's own behaviour.
 */
public final class PushView {

    private static final Log log = LogFactory.getLog(PushView.class);

    /** What applying a message did. */
    public enum Outcome {
        /** The copy now holds the message. */
        APPLIED,
        /** A delta arrived with no snapshot to apply it to. */
        NO_SNAPSHOT,
        /** After the delta the copy's reconcile hash code differs from the server's. */
        HASH_MISMATCH
    }

    /** A read-only view of the registry at one version. */
    public record Index(
            Map<String, List<ServiceInstance>> byVip, List<String> services, Long version) {

        /** The instances of {@code serviceId} (a VIP address, any case); empty when none. */
        public List<ServiceInstance> instances(String serviceId) {
            if (serviceId == null) {
                return List.of();
            }
            return byVip.getOrDefault(serviceId.toUpperCase(Locale.ROOT), List.of());
        }
    }

    private final boolean filterOnlyUp;
    private final List<Consumer<Index>> listeners = new CopyOnWriteArrayList<>();
    private Applications apps;
    private volatile Index index;
    private volatile long snapshots;

    public PushView(boolean filterOnlyUp) {
        this.filterOnlyUp = filterOnlyUp;
    }

    /** Decodes one of Eureka's {@code {"applications": ...}} documents with Eureka's codec. */
    public static Applications decode(String json) throws IOException {
        return EurekaJacksonCodec.getInstance().readValue(Applications.class, json);
    }

    /** Called after each applied change, on the stream's thread, with the new index. */
    public void addListener(Consumer<Index> listener) {
        listeners.add(listener);
    }

    /** The live index, or {@code null} when the view is not live. */
    public Index live() {
        return index;
    }

    public boolean isLive() {
        return index != null;
    }

    /** How many snapshots were applied (a resumed stream sends none). */
    public long snapshotsApplied() {
        return snapshots;
    }

    /** Whether a snapshot has been applied (whether or not the view is live now). */
    public synchronized boolean hasSnapshot() {
        return apps != null;
    }

    /** The registry version the copy holds ({@code versions__delta}), null before a snapshot. */
    public synchronized Long version() {
        return apps == null ? null : apps.getVersion();
    }

    /** Replaces the copy with a snapshot and makes the view live. */
    public synchronized Outcome applySnapshot(Applications snapshot) {
        Applications copy = new Applications();
        copy.setVersion(snapshot.getVersion());
        copy.setAppsHashCode(snapshot.getAppsHashCode());
        for (Application app : snapshot.getRegisteredApplications()) {
            for (InstanceInfo info : app.getInstancesAsIsFromEureka()) {
                put(copy, app.getName(), info);
            }
        }
        apps = copy;
        snapshots++;
        publish();
        return Outcome.APPLIED;
    }

    /**
     * Applies a delta as the Eureka client applies a fetched delta: an ADDED or MODIFIED instance
     * replaces the one with its id (or joins its application), a DELETED one is removed by id (and
     * its application with its last instance). Then the copy's reconcile hash code must equal the
     * delta's {@code apps__hashcode} (the whole registry's: this view follows every application).
     */
    public synchronized Outcome applyDelta(Applications delta) {
        if (apps == null) {
            return Outcome.NO_SNAPSHOT;
        }
        for (Application app : delta.getRegisteredApplications()) {
            for (InstanceInfo info : app.getInstancesAsIsFromEureka()) {
                String appName = info.getAppName() != null ? info.getAppName() : app.getName();
                InstanceInfo.ActionType action = info.getActionType();
                if (action == InstanceInfo.ActionType.DELETED) {
                    Application existing = apps.getRegisteredApplications(appName);
                    if (existing != null) {
                        existing.removeInstance(info);
                        if (existing.getInstancesAsIsFromEureka().isEmpty()) {
                            apps.removeApplication(existing);
                        }
                    }
                } else {
                    put(apps, appName, info);
                }
            }
        }
        apps.setVersion(delta.getVersion());
        String expected = delta.getAppsHashCode();
        String actual = apps.getReconcileHashCode();
        if (expected != null && !expected.equals(actual)) {
            return Outcome.HASH_MISMATCH;
        }
        apps.setAppsHashCode(actual);
        publish();
        return Outcome.APPLIED;
    }

    /** Makes the view live again on a resumed stream (the copy is still the server's). */
    public synchronized void resume() {
        if (apps != null && index == null) {
            publish();
        }
    }

    /** The stream broke or was refused: answer nothing until the next snapshot or resume. */
    public synchronized void notLive() {
        index = null;
    }

    /** Forgets the copy (a resync): the next message must be a snapshot. */
    public synchronized void forget() {
        apps = null;
        index = null;
    }

    private static void put(Applications into, String appName, InstanceInfo info) {
        Application existing = into.getRegisteredApplications(appName);
        if (existing == null) {
            existing = new Application(appName);
            into.addApplication(existing);
        }
        existing.addInstance(info);
    }

    private void publish() {
        Index next = build();
        index = next;
        for (Consumer<Index> listener : listeners) {
            try {
                listener.accept(next);
            } catch (RuntimeException e) {
                // A listener's failure (an event listener of the application) must not break the
                // stream; the view itself is already up to date.
                log.warn("a listener of the push view failed", e);
            }
        }
    }

    private Index build() {
        Map<String, List<ServiceInstance>> byVip = new LinkedHashMap<>();
        List<String> services = new ArrayList<>();
        for (Application app : apps.getRegisteredApplications()) {
            boolean any = false;
            for (InstanceInfo info : app.getInstancesAsIsFromEureka()) {
                if (filterOnlyUp && info.getStatus() != InstanceInfo.InstanceStatus.UP) {
                    continue;
                }
                any = true;
                String vip = info.getVIPAddress();
                if (vip == null) {
                    continue;
                }
                ServiceInstance instance = new EurekaServiceInstance(info);
                for (String name : vip.split(",")) {
                    String key = name.trim().toUpperCase(Locale.ROOT);
                    if (!key.isEmpty()) {
                        byVip.computeIfAbsent(key, k -> new ArrayList<>()).add(instance);
                    }
                }
            }
            if (any && app.getName() != null) {
                services.add(app.getName().toLowerCase(Locale.ROOT));
            }
        }
        byVip.replaceAll((k, v) -> Collections.unmodifiableList(v));
        return new Index(
                Collections.unmodifiableMap(byVip),
                Collections.unmodifiableList(services),
                Objects.requireNonNullElse(apps.getVersion(), -1L));
    }
}
