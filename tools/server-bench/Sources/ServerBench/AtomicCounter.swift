import Vapor
import VaporMappedKV

/// The MappedKV counter route's increment: `MappedKVVaporCache.increment(_:by:expiresIn:)`, which
/// reads and writes the counter under the directory's lock, so no update is lost across processes.
func atomicIncrement(_ req: Request) async throws -> Int {
    guard let cache = req.cache as? MappedKVVaporCache else { throw Abort(.notImplemented) }
    return try await cache.increment(req.parameters.get("key")!, by: 1, expiresIn: nil)
}
