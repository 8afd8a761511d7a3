package interop.secure;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.netflix.eureka.server.EnableEurekaServer;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.http.SessionCreationPolicy;
import org.springframework.security.web.SecurityFilterChain;

/**
 * The real Spring Cloud Eureka server behind HTTP basic auth (user and password from
 * spring.security.user.*), set up the way Spring Cloud's documentation tells users to: every
 * request authenticated, CSRF off for the Eureka API so clients and peers can POST/PUT/DELETE.
 */
@SpringBootApplication
@EnableEurekaServer
public class SecureReferenceServer {
    public static void main(String[] args) {
        SpringApplication.run(SecureReferenceServer.class, args);
    }

    @Bean
    SecurityFilterChain basicAuthEverywhere(HttpSecurity http) throws Exception {
        http.authorizeHttpRequests(auth -> auth.anyRequest().authenticated())
                .httpBasic(Customizer.withDefaults())
                .csrf(csrf -> csrf.ignoringRequestMatchers("/eureka/**"))
                .sessionManagement(s -> s.sessionCreationPolicy(SessionCreationPolicy.STATELESS));
        return http.build();
    }
}
