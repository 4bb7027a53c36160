// A rate limit shared by every process of an app: each request of a client increments that
// client's counter for the current window in the persist store, and a request past the limit is
// refused with 429 Too Many Requests and a `Retry-After` header.
//
// Invariants: the window is fixed: it starts with the client's first request and lasts `window`,
// whatever requests follow, so a client gets at most `limit` requests through per window across all
// processes; a request whose client key is nil is never counted; a failure of the store is
// answered as configured (let the request through, or 503), never as a 429 and never thrown on.

import Hummingbird
import Logging

/// A middleware that lets each client through at most `limit` times per `window`, counting in a
/// ``MappedKVPersistDriver`` so every process of the app shares the count.
///
/// ```swift
/// let persist = try MappedKVPersistDriver(directory: "/var/lib/myapp/persist")
/// let router = Router()
/// router.add(
///     middleware: MappedKVRateLimitMiddleware(persist: persist, limit: 100, window: .seconds(60)) { request, _ in
///         request.headers[.authorization]  // one count per credential; nil is not limited
///     })
/// ```
///
/// A client over the limit gets `429 Too Many Requests` with `Retry-After` set to the whole
/// seconds (rounded up) until its window ends, and the route is not run.
public struct MappedKVRateLimitMiddleware<Context: RequestContext>: RouterMiddleware {
    /// What the middleware does with a request when the store fails (it cannot count).
    public enum StoreFailurePolicy: Sendable, Equatable {
        /// Let the request through uncounted (fail open), and log a warning. The default: the
        /// limit protects capacity, and refusing everyone because the counter's disk is full would
        /// turn a store problem into an outage.
        case letThrough
        /// Refuse the request with 503 Service Unavailable (fail closed), and log a warning. For
        /// limits that guard something an attacker wants, such as password attempts.
        case refuse
    }

    /// Where the counts are kept.
    let persist: MappedKVPersistDriver
    /// The requests a client gets per window.
    let limit: Int
    /// How long a window lasts from the client's first request in it.
    let window: Duration
    /// What each client's counter key starts with.
    let keyPrefix: String
    /// What a failure of the store does to the request.
    let onStoreFailure: StoreFailurePolicy
    /// The client a request counts against, or nil to let it through uncounted.
    let clientKey: @Sendable (Request, Context) -> String?
    /// Where refusals on store failures are logged.
    let logger: Logger

    /// A limit of `limit` requests per `window` for each client `clientKey` names.
    ///
    /// - Parameters:
    ///   - persist: the driver that keeps the counts; every process of the app gives its own
    ///     driver on the same directory.
    ///   - limit: the requests a client gets per window; at least 1.
    ///   - window: how long a window lasts from the client's first request in it.
    ///   - keyPrefix: what each client's counter key starts with, `"rate-limit:"` by default: give
    ///     each limit of an app its own.
    ///   - onStoreFailure: ``StoreFailurePolicy/letThrough`` by default (fail open); see
    ///     ``StoreFailurePolicy``.
    ///   - logger: where store failures are logged; `Logger(label: "MappedKVRateLimitMiddleware")` by default.
    ///   - clientKey: the client a request counts against (an address, a user, an API key), or nil to
    ///     let the request through uncounted.
    public init(
        persist: MappedKVPersistDriver, limit: Int, window: Duration, keyPrefix: String = "rate-limit:",
        onStoreFailure: StoreFailurePolicy = .letThrough,
        logger: Logger = Logger(label: "MappedKVRateLimitMiddleware"),
        clientKey: @escaping @Sendable (Request, Context) -> String?
    ) {
        precondition(limit >= 1, "a rate limit lets at least one request through")
        self.persist = persist
        self.limit = limit
        // A window of zero or less would expire every counter at once and limit nothing.
        self.window = max(window, .milliseconds(1))
        self.keyPrefix = keyPrefix
        self.onStoreFailure = onStoreFailure
        self.logger = logger
        self.clientKey = clientKey
    }

    /// Counts the request against its client and runs `next` if the client is within its limit.
    ///
    /// - Throws: `HTTPError` 429 with `Retry-After` over the limit; `HTTPError` 503 when the store
    ///   fails and the policy is ``StoreFailurePolicy/refuse``; whatever `next` throws.
    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let client = clientKey(request, context) else { return try await next(request, context) }
        let key = keyPrefix + Self.counterKey(of: client)
        let count: (value: Int, timeLeft: Duration?)
        do {
            count = try await countRequest(key)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            logger.warning(
                "rate limit not counted: the store failed", metadata: ["counter": "\(key)", "error": "\(error)"])
            switch onStoreFailure {
            case .letThrough: return try await next(request, context)
            case .refuse: throw HTTPError(.serviceUnavailable, message: "the rate limit cannot be checked")
            }
        }
        guard count.value <= limit else {
            throw HTTPError(
                .tooManyRequests, headers: [.retryAfter: String(Self.retryAfterSeconds(count.timeLeft ?? window))],
                message: "too many requests: at most \(limit) per \(window)")
        }
        return try await next(request, context)
    }

    /// `timeLeft` in whole seconds rounded up, at least 1: a client told to come back in 0 seconds
    /// would come back inside the same window.
    static func retryAfterSeconds(_ timeLeft: Duration) -> Int64 {
        let (seconds, attoseconds) = timeLeft.components
        return max(1, seconds + (attoseconds > 0 ? 1 : 0))
    }
}

extension MappedKVRateLimitMiddleware {
    /// The longest client key used as it is in a counter's key; a longer one is hashed, so that a
    /// client key taken from a request never makes a key the store refuses or a huge entry.
    static var longestPlainClientKey: Int { 200 }

    /// `client` as it goes into a counter's key: as it is when short, else its length and 64-bit
    /// FNV-1a hash (the same in every process, unlike Swift's seeded `Hasher`).
    static func counterKey(of client: String) -> String {
        let bytes = Array(client.utf8)
        guard bytes.count > longestPlainClientKey else { return client }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return "#\(bytes.count)-" + String(hash, radix: 16)
    }

    /// Counts one request under `key`. A value there that is not a counter, or a counter with no
    /// expiry (set by hand), would make the limit fail open or refuse the client for ever: it is
    /// replaced by a fresh count for this window.
    func countRequest(_ key: String) async throws -> (value: Int, timeLeft: Duration?) {
        do {
            let count = try await persist.incrementReportingExpiry(key: key, by: 1, expires: window)
            guard count.timeLeft == nil else { return count }
        } catch MappedKVPersistError.notACounter(_) {
            // Replaced below, as a counter that never expires is.
        }
        try await persist.remove(key: key)
        return try await persist.incrementReportingExpiry(key: key, by: 1, expires: window)
    }
}
