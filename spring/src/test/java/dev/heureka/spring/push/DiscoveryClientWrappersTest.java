package dev.heureka.spring.push;

import static dev.heureka.spring.push.PushViewTest.app;
import static dev.heureka.spring.push.PushViewTest.doc;
import static dev.heureka.spring.push.PushViewTest.instance;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.netflix.eureka.EurekaDiscoveryClient;
import org.springframework.cloud.netflix.eureka.reactive.EurekaReactiveDiscoveryClient;
import reactor.core.publisher.Flux;

/** The DiscoveryClient subclasses: the view while it is live, the original bean otherwise. */
class DiscoveryClientWrappersTest {

    private static final ServiceInstance STALE = new DefaultServiceInstance("stale-1", "orders", "127.0.0.1", 1, false);

    /** Stands for Spring Cloud Netflix's bean, answering from the Eureka client's last fetch. */
    static final class Fetched extends EurekaDiscoveryClient {
        Fetched() {
            super(null, null);
        }

        @Override
        public List<ServiceInstance> getInstances(String serviceId) {
            return List.of(STALE);
        }

        @Override
        public List<String> getServices() {
            return List.of("orders", "gone");
        }

        @Override
        public int getOrder() {
            return 7;
        }
    }

    static final class FetchedReactive extends EurekaReactiveDiscoveryClient {
        FetchedReactive() {
            super(null, null);
        }

        @Override
        public Flux<ServiceInstance> getInstances(String serviceId) {
            return Flux.just(STALE);
        }

        @Override
        public Flux<String> getServices() {
            return Flux.just("orders", "gone");
        }
    }

    private final PushView view = new PushView(true);

    private void live(String status) throws Exception {
        view.applySnapshot(PushView.decode(doc(3, status + "_1_",
                app("ORDERS", instance("ORDERS", "o1", "orders", status, null)))));
    }

    private static List<String> ids(List<ServiceInstance> instances) {
        return instances.stream().map(ServiceInstance::getInstanceId).toList();
    }

    @Test
    void theBlockingClientDelegatesWhileTheViewIsNotLive() {
        PushEurekaDiscoveryClient client = new PushEurekaDiscoveryClient(new Fetched(), view);
        assertEquals(List.of("stale-1"), ids(client.getInstances("orders")));
        assertEquals(List.of("orders", "gone"), client.getServices());
        assertEquals(7, client.getOrder());
    }

    @Test
    void theBlockingClientAnswersFromTheLiveViewEvenWhenItHasNoInstanceUp() throws Exception {
        PushEurekaDiscoveryClient client = new PushEurekaDiscoveryClient(new Fetched(), view);
        live("UP");
        assertEquals(List.of("o1"), ids(client.getInstances("orders")));
        assertEquals(List.of("orders"), client.getServices());
        live("DOWN");
        assertEquals(List.of(), client.getInstances("orders"));
        assertEquals(List.of(), client.getServices());
        view.notLive();
        assertEquals(List.of("stale-1"), ids(client.getInstances("orders")));
    }

    @Test
    void theReactiveClientDecidesWhenSubscribed() throws Exception {
        PushEurekaReactiveDiscoveryClient client = new PushEurekaReactiveDiscoveryClient(new FetchedReactive(), view);
        Flux<ServiceInstance> instances = client.getInstances("orders");
        assertEquals(List.of("stale-1"), ids(instances.collectList().block()));
        live("UP");
        assertEquals(List.of("o1"), ids(instances.collectList().block()));
        assertEquals(List.of("orders"), client.getServices().collectList().block());
        live("OUT_OF_SERVICE");
        assertEquals(List.of(), instances.collectList().block());
    }
}
