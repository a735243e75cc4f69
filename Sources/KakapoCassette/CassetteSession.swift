import Foundation
import KakapoHTTP

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A cassette in use by one run of the proxy: answers lookups, takes new recordings, and keeps the file on
/// disk current. Once `startAutosave` runs, each recording is appended to the cassette's journal before
/// its `then` runs (so it survives the process being killed before the client gets its answer), and a
/// background thread folds recordings into the file atomically every second or so (less often for a large
/// file), so the file is always a complete cassette; `close` folds the rest and removes the journal.
///
/// Recording is a hand-off: `record(_:replacing:then:)` returns at once, and the session's one recorder
/// (a serial queue of its own) redacts, encodes, journals and indexes recordings in the order they were
/// handed over. What reads the session (`snapshot`, the counts, `close`) first waits for every recording
/// handed over before it. The recordings waiting are bounded in bytes (`recordingQueueLimit`): beyond it,
/// `record` waits until the recorder catches up.
///
/// From `startAutosave` to the end of `close` the session holds the cassette's `CassetteLock`, so no other
/// recording or `kakapo cassette` command writes the file meanwhile, and a recording that loaded the file
/// before this one's last save is refused when it starts. When the disk is full, recordings the journal
/// could not take are kept in memory and written to it as soon as it can take them; what neither the file
/// nor the journal could take at `close` goes to a file in the temporary folder, and `close` says how many
/// interactions are where.
///
/// Only interactions that were in the file when the session started are played back; what this session
/// records is written, not replayed (a recording run forwards every request, as users expect).
public final class CassetteSession: @unchecked Sendable {
    // @unchecked Sendable: every stored var below is read and written only while `condition` is locked.
    public let path: String
    public let redactor: Redactor
    public let matching: MatchOptions
    private let condition = NSCondition()
    /// The interactions loaded from the file (replaced in place in mode `all`). This session's
    /// recordings are not kept here: once folded into the file, nothing of them stays in memory.
    private var cassette: Cassette
    /// Each loaded interaction encoded as it appears in the file; nil until first needed.
    private var chunks: [[UInt8]?]
    /// Recordings not yet folded into the file, encoded.
    private var pending: [[UInt8]] = []
    /// Where the parts of the file are, as this session last wrote it; nil before its first fold.
    private var layout: CassetteFold.Layout?
    /// The loaded interactions must be written from `chunks` (the first fold, or one was replaced).
    private var originalsChanged = true
    private var index: InteractionIndex
    private let originalCount: Int
    private var replaced: Set<Int> = []
    private var recorded = 0
    /// Recordings left out because the reader would refuse them.
    private var refused = 0
    private var redactions: [String: Int] = [:]
    private var generation = 0
    private var savedGeneration = 0
    private var saver: Thread?
    private var saverRunning = false
    private var saverIdle = false
    private var stopping = false
    private var lastSaveError: CassetteError?
    private var lastSaveDuration: Duration = .zero
    private var journal: CassetteJournal?
    private var journalError: CassetteError?
    /// Journal entries not written yet (the disk was full), in order, with the generation each one
    /// brought; once the file holds a generation, its entry is no longer needed.
    private var unjournaled: [(generation: Int, entry: [UInt8])] = []
    /// The cassette's lock, held from `startAutosave` to the end of `close`.
    private var lock: CassetteLock?
    /// The file as this session's cassette was read from it.
    private let loadedStamp: CassetteFileStamp
    private let onSaveError: @Sendable (CassetteError) -> Void
    /// Takes recordings off their callers' threads, in order.
    private let recorder: CassetteRecorder

    /// Starts a session on `cassette`, which was loaded from (or will be written to) `path`. Recordings
    /// handed over and not yet journaled may hold up to `recordingQueueLimit` bytes before `record` waits.
    public init(
        path: String, cassette: Cassette, redactor: Redactor = Redactor(), matching: MatchOptions = MatchOptions(),
        repeatPolicy: InteractionIndex.RepeatPolicy = .repeatLast, recordingQueueLimit: Int = 64 << 20,
        onSaveError: @escaping @Sendable (CassetteError) -> Void = { _ in }
    ) {
        self.recorder = CassetteRecorder(label: "kakapo-cassette-recorder", limit: recordingQueueLimit)
        self.path = path
        self.redactor = redactor
        self.matching = matching
        self.cassette = cassette
        self.chunks = Array(repeating: nil, count: cassette.interactions.count)
        self.originalCount = cassette.interactions.count
        self.onSaveError = onSaveError
        self.loadedStamp = CassetteFileStamp.whenLoaded(path) ?? CassetteFileStamp.current(path)
        var index = InteractionIndex(redactor: redactor, matching: matching, repeatPolicy: repeatPolicy)
        for (position, interaction) in cassette.interactions.enumerated() {
            index.insert(interaction, at: position)
        }
        self.index = index
    }

    /// The recorded answer for `request` and its position in the cassette, advancing the playback of
    /// repeated requests, whether its response gives echoes of the request's secrets back
    /// (`Interaction.echoSources`), and, when it matched by shape (`RequestAlignment`), the places whose
    /// values differed (`body /nonce`; empty for a request that matched as it is); nil for a miss.
    public func play(_ request: HTTP.Request) -> (
        position: Int, interaction: Interaction, echoes: Bool, byShape: [String]
    )? {
        condition.lock()
        if let position = index.play(request) {
            let interaction = cassette.interactions[position]
            condition.unlock()
            return (position, interaction, !interaction.echoSources.isEmpty, [])
        }
        // Matching by shape parses bodies: on copies, outside the lock, so a client that misses does not
        // hold up every other replay; then the playback is taken under it.
        let (snapshot, interactions) = (index, cassette.interactions)
        condition.unlock()
        let found = snapshot.alignedMatches(request, interactions: interactions, now: WallClock.seconds)
        guard !found.isEmpty else { return nil }
        condition.lock()
        defer { condition.unlock() }
        guard let (position, places) = index.takeAligned(found), position < cassette.interactions.count else {
            return nil
        }
        let interaction = cassette.interactions[position]
        return (position, interaction, !interaction.echoSources.isEmpty, places)
    }

    /// When the recording `request` would replay now was made (its `recordedAt`), without playing it; nil
    /// when none matches as it is.
    public func recordedAt(of request: HTTP.Request) -> String? {
        condition.lock()
        defer { condition.unlock() }
        guard let position = index.candidates(for: request).first else { return nil }
        let recordedAt = cassette.interactions[position].recordedAt
        return recordedAt.isEmpty ? nil : recordedAt
    }

    /// Hands a recording over and returns at once; `then` runs once it is in the journal (it survives the
    /// process being killed), on the session's recorder, after the `then` of every recording handed over
    /// before it: answer the client there, so requests a client sends one after the other are recorded in
    /// that order. Keep `then` short (hand the answer to another thread); `record` and what reads the
    /// session do not wait when called from it. Waits only while the recordings not yet journaled hold
    /// more than `recordingQueueLimit` bytes.
    ///
    /// The recording is redacted; one holding what the reader refuses (a header value with a line break)
    /// is reported through `onSaveError` and left out (`then` still runs). With `replacing`, it takes the
    /// place of the first original interaction for the same request that this session has not replaced
    /// yet (mode `all`), so re-recording the same traffic gives a minimal diff.
    public func record(
        _ interaction: Interaction, replacing: Bool, then done: @escaping @Sendable () -> Void
    ) {
        recorder.submit(
            bytes: CassetteRecorder.cost(of: interaction), { self.take(interaction, replacing: replacing) },
            then: done)
    }

    /// Hands a recording over as `record(_:replacing:then:)` does, but never waits, however full the queue
    /// of recordings not yet journaled is: for callers on an event loop (a WebSocket conversation that ended).
    package func recordWithoutWaiting(_ interaction: Interaction, replacing: Bool) {
        recorder.submit(
            bytes: CassetteRecorder.cost(of: interaction), waits: false,
            { self.take(interaction, replacing: replacing) })
    }

    /// Records `interaction` as `record(_:replacing:then:)` does and returns once it is in the journal.
    public func record(_ interaction: Interaction, replacing: Bool) {
        recorder.perform(bytes: CassetteRecorder.cost(of: interaction)) {
            self.take(interaction, replacing: replacing)
        }
    }

    /// Runs on the recorder: redacts, encodes, journals and indexes one recording.
    private func take(_ interaction: Interaction, replacing: Bool) {
        // Redaction and encoding happen before the lock.
        let (clean, redacted) = redactor.redact(interaction, schema: matching.grpcSchema)
        // What the reader refuses would make the whole file unloadable: it is reported, not written.
        if let refusal = CassetteAdmission.refusal(of: clean) {
            condition.lock()
            refused += 1
            condition.unlock()
            onSaveError(CassetteAdmission.error(refusing: clean, for: refusal, file: path))
            return
        }
        let chunk = CassetteCodec.encodeChunk(clean, schema: matching.grpcSchema)
        condition.lock()
        defer { condition.unlock() }
        if let journal {
            // Written in the order the recordings are handed over, before their callers answer.
            unjournaled.append((generation + 1, CassetteJournal.entry(interaction: chunk, replacing: replacing)))
            writeUnjournaled(to: journal)
        }
        for name in redacted { redactions[name, default: 0] += 1 }
        if replacing,
            let position = index.candidates(for: interaction.request).first(where: { !replaced.contains($0) })
        {
            replaced.insert(position)
            cassette.interactions[position] = clean
            chunks[position] = chunk
            originalsChanged = true
        } else {
            pending.append(chunk)
        }
        recorded += 1
        generation += 1
        // Only a saver with nothing to do sleeps until told; one gathering a window wakes by itself.
        if saverIdle { condition.signal() }
    }

    /// The report that explains why `request` missed.
    public func missReport(for request: HTTP.Request) -> MissReport {
        let snapshot = self.snapshot
        return MissReport(request: request, cassette: snapshot, redactor: redactor, matching: matching)
    }

    /// The interactions loaded from the file, as replaced in mode `all` (this session's recordings are
    /// in the file, not here).
    public var snapshot: Cassette {
        reading { cassette }
    }

    /// How many interactions the cassette holds: those loaded and those recorded.
    public var interactionCount: Int {
        reading { cassette.interactions.count + recorded - replaced.count }
    }

    /// How many interactions this session recorded.
    public var recordedCount: Int {
        reading { recorded }
    }

    /// How many recordings were left out because the reader would refuse them (reported through `onSaveError`).
    public var refusedCount: Int {
        reading { refused }
    }

    /// How many values were redacted from this session's recordings, by header, parameter or pointer.
    public var redactionCounts: [String: Int] {
        reading { redactions }
    }

    /// The original interactions that were never played, by position.
    public var unusedPositions: [Int] {
        reading {
            let used = index.usedPositions
            return (0..<originalCount).filter { !used.contains($0) && !replaced.contains($0) }
        }
    }

    /// What reads the session: waits for every recording handed over before it, then reads under the lock.
    private func reading<Value>(_ read: () -> Value) -> Value {
        recorder.drain()
        condition.lock()
        defer { condition.unlock() }
        return read()
    }

    /// Called with the lock held: writes the journal entries not written yet, in order, up to the first
    /// that does not fit; reports a new kind of failure once.
    private func writeUnjournaled(to journal: CassetteJournal) {
        var written = 0
        defer { unjournaled.removeFirst(written) }
        for (_, entry) in unjournaled {
            do {
                try journal.append(entry)
                written += 1
                journalError = nil
            } catch {
                if journalError != error { onSaveError(error) }
                journalError = error
                return
            }
        }
    }

    /// Takes the cassette's lock, opens its journal and starts the background thread that folds new
    /// recordings into the file. Throws (`locked`) when another recording or writer holds the cassette,
    /// when the file changed since this session's cassette was read from it (another recording saved it
    /// meanwhile: starting again reads what it saved), and when the journal cannot be opened.
    public func startAutosave(interval: TimeInterval = 0.2) throws(CassetteError) {
        condition.lock()
        guard saver == nil else {
            condition.unlock()
            return
        }
        do throws(CassetteError) {
            let opened = try Self.openJournal(of: path, loadedStamp: loadedStamp)
            (journal, lock) = (opened.journal, opened.lock)
        } catch {
            condition.unlock()
            throw error
        }
        saverRunning = true
        // Weakly: the session keeps its thread (`saver`), and a thread whose block held the session strongly
        // would keep it, its recordings and its cassette, after `close` for good (tools/soak-mixed found
        // every ended recording session kept, about 25 KB each). The loop holds it while it runs.
        let thread = Thread { [weak self] in self?.autosaveLoop(interval: interval) }
        thread.name = "kakapo-cassette-saver"
        saver = thread
        condition.unlock()
        thread.start()
    }

    private func autosaveLoop(interval: TimeInterval) {
        condition.lock()
        while !stopping {
            if generation == savedGeneration {
                saverIdle = true
                condition.wait()
                saverIdle = false
                continue
            }
            // Gather what arrives in a window, then write it all at once. Every recording is already in
            // the journal: a large file waits ten times as long as its last save took (so folding uses
            // at most a tenth of one core), up to ten seconds.
            let last =
                Double(lastSaveDuration.components.seconds) + Double(lastSaveDuration.components.attoseconds) / 1e18
            // Wait out the whole window (a broadcast at close ends it early).
            let deadline = Date(timeIntervalSinceNow: min(10, max(interval, 10 * last)))
            while !stopping && condition.wait(until: deadline) {}
            saveLocked()
            if lastSaveError != nil, !stopping {
                _ = condition.wait(until: Date(timeIntervalSinceNow: interval))
            }
        }
        saverRunning = false
        condition.broadcast()
        condition.unlock()
    }

    /// Called with the lock held; releases it while writing.
    private func saveLocked() {
        guard generation != savedGeneration else { return }
        let target = generation
        let rewriteOriginals = originalsChanged || layout == nil
        if rewriteOriginals {
            // Loaded interactions are encoded on the first save, once, outside the lock so recording
            // threads are not held up.
            let missing = chunks.indices.filter { chunks[$0] == nil }.map { ($0, cassette.interactions[$0]) }
            if !missing.isEmpty {
                condition.unlock()
                let encoded = missing.map { ($0.0, CassetteCodec.encodeChunk($0.1, schema: matching.grpcSchema)) }
                condition.lock()
                // A position replaced meanwhile (mode `all`) already has its new chunk.
                for (position, chunk) in encoded where chunks[position] == nil { chunks[position] = chunk }
            }
        }
        let fold = CassetteFold(
            version: cassette.version, originals: rewriteOriginals ? chunks.map { $0 ?? [] } : nil,
            originalCount: cassette.interactions.count, recordings: pending, previous: layout)
        originalsChanged = false
        let journaled = journal?.size ?? 0
        condition.unlock()
        let started = ContinuousClock.now
        let result: Result<CassetteFold.Layout, CassetteError>
        do {
            result = .success(try fold.write(to: path))
        } catch {
            result = .failure(error)
        }
        let elapsed = ContinuousClock.now - started
        condition.lock()
        lastSaveDuration = elapsed
        switch result {
        case .failure(let failure):
            if rewriteOriginals { originalsChanged = true }
            if lastSaveError != failure { onSaveError(failure) }
            lastSaveError = failure
        case .success(let written):
            layout = written
            // What the file now holds is no longer kept here, nor in the journal.
            pending.removeFirst(fold.recordings.count)
            lastSaveError = nil
            savedGeneration = max(savedGeneration, target)
            // Entries the journal could not take are not needed for what the file now holds.
            unjournaled.removeAll { $0.generation <= savedGeneration }
            if let journal { discardFolded(upTo: journaled, of: journal) }
        }
        // A failed save removed its temporary file: the journal may have room again.
        if let journal, !unjournaled.isEmpty { writeUnjournaled(to: journal) }
    }

    /// Called with the lock held, after a fold saved the journal's first `folded` bytes' worth of
    /// entries: drops them from the journal. The bulk of the copy and its flush to the disk happen with
    /// the lock released (they took tens of milliseconds under load, during which every recording
    /// waited); only what was recorded meanwhile is copied with it held. Only the saver's thread, or
    /// `close` once it has stopped, replaces the journal's file, so it cannot change meanwhile.
    private func discardFolded(upTo folded: Int, of journal: CassetteJournal) {
        let end = journal.size
        condition.unlock()
        let prepared: Result<CassetteJournal.PreparedDiscard?, CassetteError>
        do {
            prepared = .success(try journal.prepareDiscard(upTo: folded, end: end))
        } catch {
            prepared = .failure(error)
        }
        condition.lock()
        do {
            try journal.finishDiscard(upTo: folded, prepared: prepared.get())
        } catch {
            onSaveError(error)
        }
    }

    /// Waits for the recordings handed over, stops the background saver, writes anything not yet saved,
    /// removes the journal and gives up the cassette's lock, in that order. Throws if the final save fails:
    /// the journal then stays, and the error says how many of this session's recordings are not in the file
    /// and where they are.
    public func close() throws(CassetteError) {
        recorder.drain()
        condition.lock()
        stopping = true
        condition.broadcast()
        while saverRunning { condition.wait() }
        // A save releases the lock while it writes: recordings answered meanwhile need one more.
        repeat { saveLocked() } while generation != savedGeneration && lastSaveError == nil
        var error = generation == savedGeneration ? nil : lastSaveError
        if let failure = error {
            error = unsavedError(failure)
        } else {
            // The journal goes only once the file holds everything; otherwise the next start folds it in.
            journal?.remove()
        }
        journal = nil
        // Only now may another recording read the file.
        lock?.release()
        lock = nil
        condition.unlock()
        if let error { throw error }
    }

    /// Called with the lock held, after the final save failed with `failure`: writes what the journal
    /// has no room for to a file in the temporary folder, and says where this session's unsaved
    /// recordings are.
    private func unsavedError(_ failure: CassetteError) -> CassetteError {
        guard let journal else { return failure }
        writeUnjournaled(to: journal)
        let unsaved = generation - savedGeneration
        let journaled = unsaved - unjournaled.count
        let whereabouts = Self.whereabouts(
            journaled: journaled, unjournaled: unjournaled.map(\.entry), journal: journal.path, cassette: path)
        return CassetteError(
            code: failure.code, file: failure.file, line: failure.line, column: failure.column,
            message: failure.message
                + "; \(unsaved) of the \(recorded) interactions recorded in this run are not in the file: "
                + whereabouts.joined(separator: "; "))
    }
}
