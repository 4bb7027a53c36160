import CLibCrypto

// libcrypto reports failure through return codes and its error queue; every call here that can fail
// at run time (an allocation, a key schedule, a cipher or digest call, RAND_bytes) turns a failure
// into this error, which the layers above pass on as a thrown error instead of stopping the process.

/// A libcrypto call that failed: which operation, and libcrypto's reason when it queued one.
package struct CryptoFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was being done, e.g. `"allocate a cipher context"`.
    package let operation: String
    /// libcrypto's text for the first error on its queue, or nil if it queued none.
    package let reason: String?

    /// The failure of `operation`, with the reason libcrypto queued; empties libcrypto's error queue.
    package init(_ operation: String) {
        self.operation = operation
        let code = ERR_get_error()
        if code == 0 {
            reason = nil
        } else {
            var text = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &text, text.count)
            reason = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        ERR_clear_error()
    }

    /// `libcrypto could not <operation>`, with libcrypto's reason when there is one.
    package var description: String {
        "libcrypto could not \(operation)" + (reason.map { " (\($0))" } ?? "")
    }
}
