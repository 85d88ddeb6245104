package io.gosched.web.contract;

import org.springframework.boot.test.context.SpringBootTest;

/** {@link ReadmeContract} against the service with a static token, every call sending it as the document says. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "gosched.api.token=" + ReadmeContractTokenTest.TOKEN)
class ReadmeContractTokenTest extends ReadmeContract {

    static final String TOKEN = "contract-token-0123456789";

    @Override
    String token() {
        return TOKEN;
    }
}
