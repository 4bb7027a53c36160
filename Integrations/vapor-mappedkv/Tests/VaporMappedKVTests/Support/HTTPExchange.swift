// One HTTP exchange with an example app process over loopback, for the multi-process tests.
// Invariant: every exchange has a deadline, so a hung child fails the test instead of stalling it.

import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// One HTTP exchange with an app process.
func send(
    _ method: HTTPMethod, _ url: String, json: String? = nil, cookie: String? = nil
) async throws -> (status: Int, body: String, setCookie: String?, headers: HTTPHeaders) {
    var request = HTTPClientRequest(url: url)
    request.method = method
    if let json {
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: json))
    }
    if let cookie { request.headers.add(name: "Cookie", value: "vapor-session=\(cookie)") }
    let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
    let body = try await response.body.collect(upTo: 1 << 20)
    let setCookie = response.headers["Set-Cookie"].first.flatMap { header -> String? in
        guard header.hasPrefix("vapor-session=") else { return nil }
        return String(header.dropFirst("vapor-session=".count).prefix { $0 != ";" })
    }
    return (Int(response.status.code), String(buffer: body), setCookie, response.headers)
}
