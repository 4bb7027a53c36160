import Hummingbird
import HummingbirdMappedKV
import NIOCore

/// A request context that knows the client's address, which the rate limit counts by.
struct AppRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
    }
}

let persist = try MappedKVPersistDriver(
    directory: "/var/lib/myapp/persist", configuration: .init(namespace: "myapp"))
let router = Router(context: AppRequestContext.self)

// Every route: 300 requests a minute per client address; let through if the store fails.
router.add(
    middleware: MappedKVRateLimitMiddleware(persist: persist, limit: 300, window: .seconds(60)) { _, context in
        context.remoteAddress?.ipAddress
    })
// Sign-in: 5 attempts per 15 minutes per account name; refused (503) if the store fails.
router.group("login")
    .add(
        middleware: MappedKVRateLimitMiddleware(
            persist: persist, limit: 5, window: .seconds(900), keyPrefix: "login-attempts:",
            onStoreFailure: .refuse
        ) { request, _ in request.uri.queryParameters.get("user") }
    )
    .post { _, _ in HTTPResponse.Status.ok }
router.get("/") { _, _ in "hello" }

let app = Application(router: router, services: [persist])
try await app.runService()
