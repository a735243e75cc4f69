import CCurl

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a transfer loop waits on: the sockets libcurl asks it to watch (see `CurlMultiLoop`), and
/// wake-ups from other threads. epoll on Linux, so a wait costs what is ready rather than what is
/// open; `poll` elsewhere.
final class SocketPoller: @unchecked Sendable {
    // @unchecked Sendable: other threads call only `wake()`, which writes to a descriptor that never
    // changes; everything else runs on the loop's thread.
    #if os(Linux)
        private let epoll: Int32
        private let wakeFD: Int32
        private var fds = [Int32](repeating: 0, count: 64)
        private var masks = [Int32](repeating: 0, count: 64)
    #else
        /// The pipe `wake()` writes to: read end, write end.
        private let wakePipe: (Int32, Int32)
        private var watched: [Int32: Int16] = [:]
    #endif

    init?() {
        #if os(Linux)
            let epoll = kakapo_epoll_create()
            let wakeFD = kakapo_eventfd_create()
            guard epoll >= 0, wakeFD >= 0, kakapo_epoll_watch(epoll, wakeFD, CURL_POLL_IN) == 0 else {
                if epoll >= 0 { close(epoll) }
                if wakeFD >= 0 { close(wakeFD) }
                return nil
            }
            self.epoll = epoll
            self.wakeFD = wakeFD
        #else
            var ends: [Int32] = [0, 0]
            guard pipe(&ends) == 0 else { return nil }
            for end in ends { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) }
            wakePipe = (ends[0], ends[1])
        #endif
    }

    deinit {
        #if os(Linux)
            close(epoll)
            close(wakeFD)
        #else
            close(wakePipe.0)
            close(wakePipe.1)
        #endif
    }

    /// Watches `fd` as libcurl asks (`CURL_POLL_IN`, `CURL_POLL_OUT`, `CURL_POLL_INOUT`), or stops
    /// (`CURL_POLL_REMOVE`).
    func watch(_ fd: Int32, _ what: Int32) {
        #if os(Linux)
            if what == CURL_POLL_REMOVE {
                _ = kakapo_epoll_unwatch(epoll, fd)
            } else {
                _ = kakapo_epoll_watch(epoll, fd, what)
            }
        #else
            if what == CURL_POLL_REMOVE {
                watched[fd] = nil
            } else {
                watched[fd] =
                    (what & CURL_POLL_IN != 0 ? Int16(POLLIN) : 0) | (what & CURL_POLL_OUT != 0 ? Int16(POLLOUT) : 0)
            }
        #endif
    }

    /// Ends a `wait` in progress, or the next one; from any thread.
    func wake() {
        #if os(Linux)
            var one: UInt64 = 1
            _ = write(wakeFD, &one, 8)
        #else
            var one: UInt8 = 1
            _ = write(wakePipe.1, &one, 1)
        #endif
    }

    /// Waits up to `timeout` milliseconds (-1: no limit) for a watched socket to become ready or a
    /// wake-up, then calls `ready` with each ready socket and what it is ready for (`CURL_CSELECT_IN`,
    /// `_OUT`, `_ERR`). Wake-ups are consumed, not reported.
    func wait(timeout: Int32, _ ready: (Int32, Int32) -> Void) {
        #if os(Linux)
            let count = fds.withUnsafeMutableBufferPointer { fds in
                masks.withUnsafeMutableBufferPointer { masks in
                    kakapo_epoll_wait(epoll, fds.baseAddress, masks.baseAddress, Int32(fds.count), timeout)
                }
            }
            for index in 0..<max(0, Int(count)) {
                let fd = fds[index]
                if fd == wakeFD {
                    var value: UInt64 = 0
                    _ = read(wakeFD, &value, 8)
                } else {
                    ready(fd, masks[index])
                }
            }
        #else
            var polled = [pollfd(fd: wakePipe.0, events: Int16(POLLIN), revents: 0)]
            for (fd, events) in watched { polled.append(pollfd(fd: fd, events: events, revents: 0)) }
            guard poll(&polled, nfds_t(polled.count), timeout) > 0 else { return }
            if polled[0].revents != 0 {
                var drained = [UInt8](repeating: 0, count: 64)
                while read(wakePipe.0, &drained, drained.count) > 0 {}
            }
            for entry in polled.dropFirst() where entry.revents != 0 {
                let revents = Int32(entry.revents)
                var mask: Int32 = 0
                if revents & Int32(POLLIN | POLLHUP | POLLERR) != 0 { mask |= CURL_CSELECT_IN }
                if revents & Int32(POLLOUT) != 0 { mask |= CURL_CSELECT_OUT }
                if revents & Int32(POLLERR) != 0 { mask |= CURL_CSELECT_ERR }
                ready(entry.fd, mask)
            }
        #endif
    }
}
