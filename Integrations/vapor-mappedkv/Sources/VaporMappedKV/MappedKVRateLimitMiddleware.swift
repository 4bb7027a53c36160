// A rate limit shared by every process of an app on one host: N requests per window per client,
// counted with the MappedKV cache's atomic counters. Invariants: each request increments its
// client's counter for the current window exactly once, before it is answered, so every process
// sees every other's requests; a request over the limit gets 429 with a Retry-After of the whole
// seconds left in the window (at least one); when the count cannot be made, the request is let
// through or refused with 503, as the middleware was configured, never answered with the error.

import Foundation
import NIOHTTP1
import Vapor

/// Limits each client to ``limit`` requests per ``window``, across every process that shares the
/// application's MappedKV cache directory.
///
/// Windows are fixed: they start at whole multiples of the window since 1970, and each client has
/// one counter per window in the cache (created with the window's length as its expiry, so old
/// ones go by themselves). A request past the limit is answered 429 Too Many Requests with a
/// `Retry-After` header giving the seconds until the window ends. Refused requests count too, so a
/// client that keeps trying stays refused until the window ends. As with every fixed window, a
/// client can make up to twice ``limit`` requests across the end of one window and the start of
/// the next.
///
/// The application's cache must be MappedKV's (`app.caches.use(.mappedKV(directory:))`); the
/// counters live in its directory and namespace, in an area of their own that no cache key
/// reaches. A client key longer than 200 bytes is counted under a hash of it.
///
/// ```swift
/// import Vapor
/// import VaporMappedKV
///
/// let app = try await Application.make(.detect())
/// app.caches.use(.mappedKV(directory: "/var/lib/my-app"))
/// // 100 requests a minute per client address on the API routes.
/// let limited = app.grouped(MappedKVRateLimitMiddleware(limit: 100, per: .seconds(60)))
/// limited.get("api", "status") { _ in "ok" }
/// // 5 login attempts a minute per user name; refused when the count cannot be kept.
/// let logins = MappedKVRateLimitMiddleware(
///     limit: 5, per: .seconds(60), name: "login", whenStoreFails: .refuse
/// ) { req in req.headers.first(name: "X-User") }
/// app.grouped(logins).post("login") { _ in HTTPStatus.ok }
/// try await app.execute()
/// try await app.asyncShutdown()
/// ```
public struct MappedKVRateLimitMiddleware: AsyncMiddleware {
    /// What the middleware does with a request whose count it could not make (the cache directory
    /// failed, the cache is not MappedKV's, the client key is not a usable key).
    public enum StoreFailurePolicy: Sendable, Equatable {
        /// Let the request through, uncounted: the default. A rate limit guards capacity, and a
        /// store that fails (a full or failing disk on this host) would otherwise turn into a
        /// refusal of every request, an outage worse than the one the limit guards against.
        case allow
        /// Refuse the request with 503 Service Unavailable: for limits that are a security control,
        /// such as login attempts, where an uncounted request is worse than a refused one.
        case refuse
    }

    /// The most requests a client makes in one window; the next ones are refused.
    public let limit: Int
    /// The length of a window, in whole seconds (at least one).
    public let window: Duration
    /// The name of this limit, which keeps its counters apart from those of other limits.
    public let name: String
    /// What happens to a request that could not be counted.
    public let storeFailurePolicy: StoreFailurePolicy
    /// The client a request counts for; nil lets the request through uncounted.
    let clientKey: @Sendable (Request) -> String?
    /// The time since 1970; the system's wall clock outside tests.
    let now: @Sendable () -> Duration

    /// A limit of `limit` requests per `window` for each client that `clientKey` names.
    ///
    /// - Parameters:
    ///   - limit: the most requests a client makes in one window.
    ///   - window: the window's length, rounded up to whole seconds (at least one).
    ///   - name: keeps this limit's counters apart from other limits'; "default" unless given.
    ///   - whenStoreFails: what happens to a request that could not be counted: `.allow` (the
    ///     default) lets it through, `.refuse` answers 503.
    ///   - clientKey: the client a request counts for, nil for a request not to limit. By default
    ///     the IP address of the connection's peer (`req.remoteAddress`), which a client cannot
    ///     choose; behind a reverse proxy that is the proxy, so there use the address the proxy
    ///     reports (`req.peerAddress?.ipAddress`, which reads `Forwarded` and `X-Forwarded-For`, is
    ///     right only when every request comes through a proxy that sets them).
    public init(
        limit: Int, per window: Duration, name: String = "default",
        whenStoreFails: StoreFailurePolicy = .allow,
        clientKey: @escaping @Sendable (Request) -> String? = { $0.remoteAddress?.ipAddress }
    ) {
        self.init(
            limit: limit, per: window, name: name, whenStoreFails: whenStoreFails, clientKey: clientKey,
            now: { .seconds(Date().timeIntervalSince1970) })
    }

    /// The same, with the clock `now` (tests move it by hand).
    init(
        limit: Int, per window: Duration, name: String, whenStoreFails: StoreFailurePolicy,
        clientKey: @escaping @Sendable (Request) -> String?, now: @escaping @Sendable () -> Duration
    ) {
        self.limit = limit
        let (seconds, attoseconds) = window.components
        let roundedUp = seconds == .max ? seconds : seconds + (attoseconds > 0 ? 1 : 0)
        self.window = .seconds(max(1, roundedUp))
        self.name = name
        self.storeFailurePolicy = whenStoreFails
        self.clientKey = clientKey
        self.now = now
    }

    /// Counts the request for its client and answers 429 when the client is over the limit.
    public func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        guard let client = clientKey(request) else { return try await next.respond(to: request) }
        let windowSeconds = Int(window.components.seconds)
        let nowSeconds = Int(now().components.seconds)
        let windowIndex = nowSeconds / windowSeconds
        let count: Int
        do {
            guard let cache = request.cache as? MappedKVVaporCache else {
                throw RateLimitCacheMissing()
            }
            count = try cache.countRequest(
                "\(name)/\(windowIndex)/\(Self.counterKey(of: client))", window: .seconds(windowSeconds))
        } catch {
            request.logger.error(
                "rate limit not counted", metadata: ["limit": "\(name)", "error": "\(String(describing: error))"])
            switch storeFailurePolicy {
            case .allow: return try await next.respond(to: request)
            case .refuse: throw Abort(.serviceUnavailable)
            }
        }
        guard count <= limit else {
            let retryAfter = max(1, (windowIndex + 1) * windowSeconds - nowSeconds)
            throw Abort(.tooManyRequests, headers: ["Retry-After": String(retryAfter)])
        }
        return try await next.respond(to: request)
    }
}

extension MappedKVRateLimitMiddleware {
    /// The longest client key used as it is in a counter's key; a longer one is hashed, so that a
    /// client key taken from a request never makes a key the cache refuses.
    static let longestPlainClientKey = 200

    /// `client` as it goes into a counter's key: as it is when short, else its length and 64-bit
    /// FNV-1a hash (the same in every process, unlike Swift's seeded `Hasher`).
    static func counterKey(of client: String) -> String {
        let bytes = Array(client.utf8)
        guard bytes.count > longestPlainClientKey else { return client }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return "#\(bytes.count)-" + String(hash, radix: 16)
    }
}

extension MappedKVVaporCache {
    /// The area of the rate limit's counters: beside the cache's, in the same directory and
    /// namespace, but out of reach of every cache key (which all begin with the cache's area), so
    /// no value an app stores can stand in for a counter.
    static let rateLimitArea = "vapor.ratelimit"

    /// Counts one request under `key` in the rate limit's area and returns the count so far; a
    /// counter created now lasts `window`. A value there that is not a counter (left by hand, or
    /// by an older release) is replaced by a fresh count instead of failing every request.
    func countRequest(_ key: String, window: Duration) throws -> Int {
        let counters = JSONEntries(
            disk: entries.disk, prefix: Self.rateLimitArea + entries.prefix.dropFirst(Self.area.count))
        do {
            return try counters.increment(key, by: 1, timeToLive: window)
        } catch MappedKVVaporError.notACounter {
            try counters.removeValue(forKey: key)
            return try counters.increment(key, by: 1, timeToLive: window)
        }
    }
}

/// The application's cache is not MappedKV's, so the rate limit has no counters.
private struct RateLimitCacheMissing: Error, CustomStringConvertible {
    var description: String {
        "the application's cache is not MappedKV's: use app.caches.use(.mappedKV(directory:)) with the rate limit"
    }
}
