import Vapor
import VaporMappedKV

/// Placeholder until `MappedKVVaporCache.increment(_:by:expiresIn:)` lands.
func atomicIncrement(_ req: Request) async throws -> Int {
    throw Abort(.notImplemented)
}
