package dev.heureka.spring.push;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.netflix.eureka.EurekaServiceInstance;

class PushViewTest {

    static String instance(String app, String id, String vip, String status, String action) {
        return "{\"instanceId\":\"" + id + "\",\"hostName\":\"127.0.0.1\",\"app\":\"" + app + "\","
                + "\"ipAddr\":\"127.0.0.1\",\"status\":\"" + status + "\",\"overriddenStatus\":\"UNKNOWN\","
                + "\"port\":{\"$\":8080,\"@enabled\":\"true\"},\"securePort\":{\"$\":443,\"@enabled\":\"false\"},"
                + "\"countryId\":1,\"dataCenterInfo\":{\"@class\":\"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo\",\"name\":\"MyOwn\"},"
                + "\"leaseInfo\":{\"renewalIntervalInSecs\":30,\"durationInSecs\":90},"
                + "\"metadata\":{\"zone\":\"z1\"},"
                + "\"vipAddress\":\"" + vip + "\",\"secureVipAddress\":\"" + vip + "\","
                + "\"isCoordinatingDiscoveryServer\":\"false\",\"lastUpdatedTimestamp\":\"1\",\"lastDirtyTimestamp\":\"1\""
                + (action == null ? "" : ",\"actionType\":\"" + action + "\"") + "}";
    }

    static String doc(long version, String hash, String... apps) {
        return "{\"applications\":{\"versions__delta\":\"" + version + "\",\"apps__hashcode\":\"" + hash
                + "\",\"application\":[" + String.join(",", apps) + "]}}";
    }

    static String app(String name, String... instances) {
        return "{\"name\":\"" + name + "\",\"instance\":[" + String.join(",", instances) + "]}";
    }

    private final PushView view = new PushView(true);

    private void snapshot() throws Exception {
        assertEquals(PushView.Outcome.APPLIED, view.applySnapshot(PushView.decode(doc(41, "DOWN_1_UP_2_",
                app("ORDERS",
                        instance("ORDERS", "o1", "orders", "UP", null),
                        instance("ORDERS", "o2", "orders", "UP", null)),
                app("BILLING", instance("BILLING", "b1", "billing,payments", "DOWN", null))))));
    }

    private static List<String> ids(List<ServiceInstance> instances) {
        return instances.stream().map(ServiceInstance::getInstanceId).sorted().toList();
    }

    @Test
    void aViewIsNotLiveBeforeItsFirstSnapshot() {
        assertNull(view.live());
        assertFalse(view.hasSnapshot());
    }

    @Test
    void aSnapshotIndexesUpInstancesByVipAddressInAnyCase() throws Exception {
        snapshot();
        assertEquals(List.of("o1", "o2"), ids(view.live().instances("orders")));
        assertEquals(List.of("o1", "o2"), ids(view.live().instances("ORDERS")));
        assertEquals(List.of(), view.live().instances("billing"));
        assertEquals(List.of("orders"), view.live().services());
        assertEquals(41L, view.version());
    }

    @Test
    void instancesAreSpringCloudNetflixServiceInstancesOfEurekasInstanceInfo() throws Exception {
        snapshot();
        ServiceInstance first = view.live().instances("orders").get(0);
        EurekaServiceInstance eureka = assertInstanceOf(EurekaServiceInstance.class, first);
        assertEquals("ORDERS", eureka.getInstanceInfo().getAppName());
        assertEquals("z1", first.getMetadata().get("zone"));
        assertEquals(8080, first.getPort());
        assertFalse(first.isSecure());
    }

    @Test
    void withoutUpFilteringEveryInstanceCountsAndEachNameOfACommaSeparatedVipAddress() throws Exception {
        PushView all = new PushView(false);
        all.applySnapshot(PushView.decode(doc(1, "DOWN_1_",
                app("BILLING", instance("BILLING", "b1", "billing, payments", "DOWN", null)))));
        assertEquals(List.of("b1"), ids(all.live().instances("payments")));
        assertEquals(List.of("b1"), ids(all.live().instances("Billing")));
        assertEquals(List.of("billing"), all.live().services());
    }

    @Test
    void aModifiedInstanceReplacesTheOneWithItsId() throws Exception {
        snapshot();
        assertEquals(PushView.Outcome.APPLIED, view.applyDelta(PushView.decode(doc(42, "DOWN_1_OUT_OF_SERVICE_1_UP_1_",
                app("ORDERS", instance("ORDERS", "o2", "orders", "OUT_OF_SERVICE", "MODIFIED"))))));
        assertEquals(List.of("o1"), ids(view.live().instances("orders")));
        assertEquals(42L, view.live().version());
    }

    @Test
    void anAddedInstanceOfANewApplicationIsIndexed() throws Exception {
        snapshot();
        assertEquals(PushView.Outcome.APPLIED, view.applyDelta(PushView.decode(doc(42, "DOWN_1_UP_3_",
                app("SHIPPING", instance("SHIPPING", "s1", "shipping", "UP", "ADDED"))))));
        assertEquals(List.of("s1"), ids(view.live().instances("shipping")));
        assertEquals(List.of("orders", "shipping"), view.live().services().stream().sorted().toList());
    }

    @Test
    void aDeletedInstanceIsRemovedByIdAndItsApplicationWithItsLastInstance() throws Exception {
        snapshot();
        assertEquals(PushView.Outcome.APPLIED, view.applyDelta(PushView.decode(doc(42, "UP_2_",
                app("BILLING", instance("BILLING", "b1", "billing", "DOWN", "DELETED"))))));
        assertEquals(PushView.Outcome.APPLIED, view.applyDelta(PushView.decode(doc(43, "UP_1_",
                app("ORDERS", instance("ORDERS", "o1", "orders", "UP", "DELETED"))))));
        assertEquals(List.of("o2"), ids(view.live().instances("orders")));
    }

    @Test
    void aDeltaWhoseHashCodeDisagreesAsksForResynchronisation() throws Exception {
        snapshot();
        assertEquals(PushView.Outcome.HASH_MISMATCH, view.applyDelta(PushView.decode(doc(42, "UP_7_",
                app("ORDERS", instance("ORDERS", "o3", "orders", "UP", "ADDED"))))));
    }

    @Test
    void aDeltaBeforeAnySnapshotCannotBeApplied() throws Exception {
        assertEquals(PushView.Outcome.NO_SNAPSHOT, view.applyDelta(PushView.decode(doc(42, "UP_1_",
                app("ORDERS", instance("ORDERS", "o3", "orders", "UP", "ADDED"))))));
    }

    @Test
    void aViewThatIsNotLiveKeepsItsCopyForResuming() throws Exception {
        snapshot();
        view.notLive();
        assertNull(view.live());
        assertTrue(view.hasSnapshot());
        view.resume();
        assertEquals(List.of("o1", "o2"), ids(view.live().instances("orders")));
    }

    @Test
    void listenersHearEveryAppliedChange() throws Exception {
        List<Long> seen = new java.util.ArrayList<>();
        view.addListener(index -> seen.add(index.version()));
        snapshot();
        view.applyDelta(PushView.decode(doc(42, "DOWN_1_UP_1_",
                app("ORDERS", instance("ORDERS", "o1", "orders", "UP", "DELETED")))));
        assertEquals(List.of(41L, 42L), seen);
    }
}
