// The floor under a coherent memory hit (`Cache.value(forKey:)` served from memory): the memory
// tier's hit takes its own lock, and the check that another process changed nothing takes the
// manifest's, then loads three words of the shared meta and two flags. Here, at 100,000 keys read
// in order as the cache benchmark's memory workload does: a `Dictionary<String, Int>` lookup
// under a `Mutex`, and the same lookup after a second `Mutex` taken around three loads from a
// page shared with other processes (an anonymous `MAP_SHARED` mapping) and two atomic loads.
// Built and run by tools/microbench.sh; medians of 9 rounds.

import Dispatch
import Glibc
import Synchronization

let count = 100_000
let keys = (0..<count).map { "mem-\(count + $0)" }
var table: [String: Int] = [:]
for (index, key) in keys.enumerated() { table[key] = index }
let cache = Mutex(table)
let manifestLock = Mutex(0)
let pending = Atomic<Bool>(false)
let delivering = Atomic<Bool>(false)
guard let page = mmap(nil, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0), page != MAP_FAILED
else { fatalError("mmap failed") }
let meta = UnsafeMutableRawPointer(page)
meta.storeBytes(of: 7, toByteOffset: 0, as: UInt32.self)

@inline(never)
func hit(_ key: String) -> Int { cache.withLock { $0[key] ?? 0 } }

@inline(never)
func coherentHit(_ key: String) -> Int {
    let moved = manifestLock.withLock { observed -> Bool in
        let stamp =
            meta.load(fromByteOffset: 0, as: UInt32.self) &+ meta.load(fromByteOffset: 4, as: UInt32.self)
            &+ meta.load(fromByteOffset: 8, as: UInt32.self)
        return Int(stamp) != observed + 7
    }
    if pending.load(ordering: .sequentiallyConsistent) || delivering.load(ordering: .sequentiallyConsistent) || moved {
        return -1
    }
    return hit(key)
}

var hits: [Double] = []
var coherent: [Double] = []
var sink = 0
for _ in 0..<9 {
    var start = DispatchTime.now().uptimeNanoseconds
    for key in keys { sink &+= hit(key) }
    hits.append(Double(DispatchTime.now().uptimeNanoseconds - start) / Double(count))
    start = DispatchTime.now().uptimeNanoseconds
    for key in keys { sink &+= coherentHit(key) }
    coherent.append(Double(DispatchTime.now().uptimeNanoseconds - start) / Double(count))
}
hits.sort()
coherent.sort()
print("Mutex<[String: Int]> lookup\t\(Int(hits[4])) ns")
print("the same after a second Mutex around the stamp's loads\t\(Int(coherent[4])) ns")
let hundredths = Int((coherent[4] / hits[4] * 100).rounded())
print("ratio\t\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)x")
if sink == 42 { print("") }  // keeps the loops from being optimized away
