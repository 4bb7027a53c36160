import MappedKV
import Synchronization

/// A recovery handler that answers with a fixed rule and remembers every call.
final class HandlerLog: Sendable {
    struct Call: Sendable {
        var event: DamageEvent
        var decision: RecoveryDecision
    }

    private let rule: @Sendable (DamageEvent) -> RecoveryDecision
    private let recorded = Mutex<[Call]>([])

    init(_ rule: @escaping @Sendable (DamageEvent) -> RecoveryDecision) {
        self.rule = rule
    }

    /// The handler to put in a ``Configuration``.
    var handler: RecoveryHandler {
        { [self] event in
            let decision = rule(event)
            recorded.withLock { $0.append(Call(event: event, decision: decision)) }
            return decision
        }
    }

    /// The calls so far, in order.
    var calls: [Call] { recorded.withLock { $0 } }
}
