import Foundation
import Synchronization

/// Runs uploads' libvips work off Swift's cooperative threads, at most one job per core.
///
/// An upload first takes a slot (`withSlot`): `workers` run, up to `queueLimit` more wait, and
/// past that the answer is `PhotoError.busy` (503) before the body is even read. So at most
/// `workers + queueLimit` bodies (each at most 10 MiB) and `workers` decodes are in memory at
/// once, however many clients upload.
public final class PhotoProcessor: Sendable {
    public let workers: Int
    public let queueLimit: Int
    public let limits: PhotoLimits
    private let slots = Atomic<Int>(0)
    private let threads: WorkerThreads

    public init(workers: Int = ProcessInfo.processInfo.activeProcessorCount, queueLimit: Int = 8, limits: PhotoLimits = PhotoLimits()) {
        self.workers = max(1, workers)
        self.queueLimit = max(0, queueLimit)
        self.limits = limits
        self.threads = WorkerThreads.shared(count: self.workers)
    }

    /// Uploads holding a slot (running, waiting, or still sending their body).
    public var inFlight: Int { slots.load(ordering: .relaxed) }

    /// Runs `body` holding one of the `workers + queueLimit` slots; `PhotoError.busy` when all
    /// are taken.
    public func withSlot<T: Sendable>(_ body: (Slot) async throws -> T) async throws -> T {
        let taken = slots.wrappingAdd(1, ordering: .acquiring).newValue
        defer { slots.wrappingSubtract(1, ordering: .releasing) }
        guard taken <= workers + queueLimit else { throw PhotoError.busy }
        return try await body(Slot(processor: self))
    }

    /// A taken slot: what may be processed with it.
    public struct Slot: Sendable {
        let processor: PhotoProcessor

        /// `data` (a `format` image) processed on a worker thread.
        public func process(_ data: Data, as format: ImageFormat) async throws(PhotoError) -> ProcessedPhoto {
            let limits = processor.limits
            let result = await processor.threads.run {
                Result(catching: { () throws(PhotoError) -> ProcessedPhoto in try Vips.process(data, as: format, limits: limits) })
            }
            return try result.get()
        }
    }
}

/// Threads of their own for blocking work, taking jobs first come, first served. One set per
/// process (the cores are the process's), made on first use and kept for its life.
final class WorkerThreads: @unchecked Sendable {
    private let condition = NSCondition()
    /// Guarded by `condition`.
    private var jobs: [@Sendable () -> Void] = []
    private var head = 0
    let count: Int

    private static let pools = Mutex<[Int: WorkerThreads]>([:])

    /// The process's `count` worker threads.
    static func shared(count: Int) -> WorkerThreads {
        pools.withLock { pools in
            if let pool = pools[count] { return pool }
            let pool = WorkerThreads(count: count)
            pools[count] = pool
            return pool
        }
    }

    private init(count: Int) {
        self.count = count
        for index in 0..<count {
            let thread = Thread { [self] in loop() }
            thread.name = "photo-\(index)"
            // libheif and libjpeg keep sizeable frames on the stack.
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    /// Runs `body` on one of the threads and returns its value.
    func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            submit { continuation.resume(returning: body()) }
        }
    }

    private func submit(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func loop() {
        while true {
            condition.lock()
            while head == jobs.count { condition.wait() }
            let job = jobs[head]
            head += 1
            if head > 64, head * 2 > jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            condition.unlock()
            job()
        }
    }
}
