internal import CGIO
internal import CNice
internal import CShareGLib
import GLibLoop
import ShareCore

/// The owner of one libnice `NiceAgent` (one stream, one component: BUNDLE + rtcp-mux), confined
/// to the GLib loop thread: every method here runs there, and libnice's signals and receive
/// callback arrive there (the agent is created with the loop's context). `ICEAgent` is the
/// thread-safe face; this class is released on the loop thread after `close()` has disconnected
/// every callback, so the unretained user data libnice holds never outlives it.
final class ICENiceAgent {
    private let loop: GLibLoop
    private let shared: ICEShared
    private let configuration: ICEAgent.Configuration
    private let logger: Logger
    private var agent: OpaquePointer?
    private var streamID: guint = 0
    private var signalHandlers: [gulong] = []
    private var receiveHandler: ICEAgent.ReceiveHandler?
    /// Since the last (re)start: a pair worked, so a later FAILED means the peer stopped answering.
    private var everConnected = false
    private var localGatheringDone = false
    private var remoteEndOfCandidates = false
    /// Armed when both sides finished gathering and the peer sent nothing (see `noRemoteCandidatesGrace`).
    private var noCandidatesTimer: UnsafeMutablePointer<GSource>?

    static let componentID: guint = 1

    init(loop: GLibLoop, shared: ICEShared, configuration: ICEAgent.Configuration, logger: Logger) {
        self.loop = loop
        self.shared = shared
        self.configuration = configuration
        self.logger = logger
    }

    deinit { release() }

    static func from(callbackUserData data: gpointer?) -> ICENiceAgent {
        Unmanaged<ICENiceAgent>.fromOpaque(data!).takeUnretainedValue()
    }

    private var callbackUserData: gpointer { Unmanaged.passUnretained(self).toOpaque() }

    // MARK: Setup

    /// Creates the agent, its stream and component, and starts gathering. `stun` and `turn` hold
    /// numeric addresses (resolved by the caller, off this thread).
    func start(stun: ICEResolvedServer?, turn: [ICEResolvedTURN], receiveHandler: ICEAgent.ReceiveHandler?)
        throws(ICEError) -> ICEAgent.Credentials
    {
        precondition(agent == nil, "ICENiceAgent.start twice")
        self.receiveHandler = receiveHandler
        // Liveness of the selected pair: connectivity checks every 4–6 s ("keepalive-conncheck"),
        // the connection lost after 50 s without an answer or at once on a 403 (consent revoked),
        // and nothing sent after that. Not libnice 0.1.21's RFC 7675 mode: it sends each consent
        // check once, never again, and gives up 10 s after the last answer, so two checks lost in
        // a row ended a call (10 % loss each way ended one within a minute; 2 % most hours).
        let options = NiceAgentOption(rawValue: NICE_AGENT_OPTION_ICE_TRICKLE.rawValue)
        guard let agent = nice_agent_new_full(loop.contextPointer, NICE_COMPATIBILITY_RFC5245, options) else {
            throw .agentSetupFailed("nice_agent_new_full returned NULL")
        }
        self.agent = agent
        CShareNice_set_keepalive_conncheck(agent, 1)
        CShareNice_set_controlling(agent, configuration.role == .controlling ? 1 : 0)
        CShareNice_set_ice_tcp(agent, configuration.iceTCP ? 1 : 0)
        CShareNice_set_upnp(agent, 0)
        if configuration.relayOnly { CShareNice_set_force_relay(agent, 1) }
        if let timing = configuration.checkTiming {
            CShareNice_set_check_timing(
                agent, timing.initialTimeoutMilliseconds, timing.maxRetransmissions,
                timing.reliableTimeoutMilliseconds)
        }
        if let stun { CShareNice_set_stun_server(agent, stun.address, UInt32(stun.port)) }

        let addresses = ICELocalAddresses.select(
            from: configuration.loopbackOnly ? [] : ICELocalAddresses.current(),
            loopbackOnly: configuration.loopbackOnly,
            allowed: configuration.allowedInterfaces)
        for text in addresses {
            var address = NiceAddress()
            nice_address_init(&address)
            guard nice_address_set_from_string(&address, text) != 0 else { continue }
            nice_agent_add_local_address(agent, &address)
        }

        connectSignals(agent)
        streamID = nice_agent_add_stream(agent, 1)
        guard streamID != 0 else { throw .agentSetupFailed("nice_agent_add_stream failed") }

        for relay in turn {
            let host = relay.address, server = relay.server
            let type: NiceRelayType
            switch server.transport {
            case .udp: type = NICE_RELAY_TYPE_TURN_UDP
            case .tcp: type = NICE_RELAY_TYPE_TURN_TCP
            case .tls:
                // libnice 0.1.21 wraps TURN_TLS in TLS only for its Google and OC2007 modes; in
                // RFC 5245 mode it would speak plain TCP to a TLS port. Skip it rather than fail late.
                logger.warning(
                    "skipping TURN server \(server.host):\(server.port) over TLS: libnice 0.1.21 cannot speak TLS to a TURN server in RFC 5245 mode; use turn: over UDP or TCP",
                    ["ice.turn": "\(server.host):\(server.port)"])
                continue
            }
            if nice_agent_set_relay_info(
                agent, streamID, Self.componentID, host, guint(server.port), server.username,
                server.credential, type) == 0
            {
                logger.warning("libnice refused TURN server \(host):\(server.port) (\(server.transport.rawValue))")
            }
        }

        nice_agent_attach_recv(
            agent, streamID, Self.componentID, loop.contextPointer,
            { _, _, _, length, buffer, data in
                ICENiceAgent.from(callbackUserData: data).received(
                    UnsafeRawBufferPointer(start: buffer, count: Int(length)))
            }, callbackUserData)

        let credentials = try readLocalCredentials()
        shared.begin(credentials: credentials, target: ICEShared.SendTarget(agent: agent, streamID: streamID))
        logger.info(
            "ICE agent started",
            [
                "ice.role": configuration.role.rawValue,
                "ice.addresses": addresses.joined(separator: ","),
                "ice.ufrag": credentials.ufrag
            ])
        shared.publish(.gathering, logger: logger)
        guard nice_agent_gather_candidates(agent, streamID) != 0 else { throw .gatheringFailed }
        return credentials
    }

    private func connectSignals(_ agent: OpaquePointer) {
        let object = UnsafeMutableRawPointer(agent)
        let onState: @convention(c) (OpaquePointer?, guint, guint, guint, gpointer?) -> Void = {
            _, stream, component, state, data in
            let core = ICENiceAgent.from(callbackUserData: data)
            core.onLoop { $0.componentStateChanged(stream: stream, component: component, state: state) }
        }
        let onGatheringDone: @convention(c) (OpaquePointer?, guint, gpointer?) -> Void = { _, stream, data in
            ICENiceAgent.from(callbackUserData: data).onLoop { $0.gatheringDone(stream: stream) }
        }
        let onCandidate: @convention(c) (OpaquePointer?, UnsafeMutablePointer<NiceCandidate>?, gpointer?) -> Void = {
            _, candidate, data in
            let core = ICENiceAgent.from(callbackUserData: data)
            // The candidate lives only during the signal: make its line now, then hop if needed.
            guard let candidate, let line = core.sdpLine(for: candidate) else { return }
            let stream = candidate.pointee.stream_id, component = candidate.pointee.component_id
            core.onLoop { $0.newLocalCandidate(line, stream: stream, component: component) }
        }
        let onPair:
            @convention(c) (
                OpaquePointer?, guint, guint, UnsafeMutablePointer<NiceCandidate>?,
                UnsafeMutablePointer<NiceCandidate>?, gpointer?
            ) -> Void = { _, stream, _, local, remote, data in
                let core = ICENiceAgent.from(callbackUserData: data)
                guard let local, let remote else { return }
                let pair = ICEAgent.SelectedPair(local: local.pointee, remote: remote.pointee)
                core.onLoop { $0.selectedPairChanged(pair, stream: stream) }
            }
        signalHandlers = [
            CShareGLib_signal_connect(
                object, "component-state-changed", unsafeBitCast(onState, to: GCallback.self), callbackUserData),
            CShareGLib_signal_connect(
                object, "candidate-gathering-done", unsafeBitCast(onGatheringDone, to: GCallback.self), callbackUserData
            ),
            CShareGLib_signal_connect(
                object, "new-candidate-full", unsafeBitCast(onCandidate, to: GCallback.self), callbackUserData),
            CShareGLib_signal_connect(
                object, "new-selected-pair-full", unsafeBitCast(onPair, to: GCallback.self), callbackUserData)
        ]
    }

    /// libnice emits queued signals from whichever thread unlocks its agent; they almost always
    /// arrive on the loop thread, and any that do not are moved there.
    private func onLoop(_ work: @escaping (ICENiceAgent) -> Void) {
        if loop.isLoopThread { return work(self) }
        let bound = LoopConfined((agent: self, work: work), on: loop)
        loop.invoke { bound.value.work(bound.value.agent) }
    }

    private func readLocalCredentials() throws(ICEError) -> ICEAgent.Credentials {
        var ufrag: UnsafeMutablePointer<gchar>?
        var pwd: UnsafeMutablePointer<gchar>?
        guard let agent, nice_agent_get_local_credentials(agent, streamID, &ufrag, &pwd) != 0, let ufrag, let pwd else {
            throw .agentSetupFailed("no local credentials")
        }
        defer { g_free(ufrag); g_free(pwd) }
        return ICEAgent.Credentials(ufrag: String(cString: ufrag), pwd: String(cString: pwd))
    }

    // MARK: Remote side

    func setRemoteCredentials(_ credentials: ICEAgent.Credentials) throws(ICEError) {
        guard let agent else { throw .closed }
        guard nice_agent_set_remote_credentials(agent, streamID, credentials.ufrag, credentials.pwd) != 0 else {
            throw .credentialsRejected(ufrag: credentials.ufrag)
        }
        shared.setRemoteCredentials(credentials)
    }

    /// Adds one trickled candidate. Returns false for a candidate this agent ignores (another
    /// component: with rtcp-mux everything travels on component 1).
    func addRemoteCandidate(_ line: String) throws(ICEError) -> Bool {
        guard let agent else { throw .closed }
        let attribute = try ICECandidateLine.attribute(line)
        guard let candidate = nice_agent_parse_remote_candidate_sdp(agent, streamID, "a=" + attribute) else {
            throw .malformedCandidate(line: line, reason: "libnice could not parse it")
        }
        defer { nice_candidate_free(candidate) }
        guard candidate.pointee.component_id == Self.componentID else {
            logger.debug(
                "ignoring a remote candidate for component \(candidate.pointee.component_id) (rtcp-mux uses component 1 only)"
            )
            return false
        }
        let list = g_slist_append(nil, candidate)
        defer { g_slist_free(list) }
        let added = nice_agent_set_remote_candidates(agent, streamID, Self.componentID, list)
        guard added >= 0 else { throw .malformedCandidate(line: line, reason: "libnice refused it") }
        logger.debug("remote candidate added", ["ice.candidate": attribute])
        return added > 0
    }

    func endOfRemoteCandidates() throws(ICEError) {
        guard let agent else { throw .closed }
        _ = nice_agent_peer_candidate_gathering_done(agent, streamID)
        remoteEndOfCandidates = true
        logger.debug("remote end of candidates")
        armNoCandidatesTimerIfNeeded()
    }

    /// libnice waits forever on an empty check list; give the peer's own checks a grace period,
    /// then fail with the reason.
    private func armNoCandidatesTimerIfNeeded() {
        guard noCandidatesTimer == nil, localGatheringDone, remoteEndOfCandidates, candidates(remote: true).isEmpty
        else { return }
        let milliseconds = configuration.noRemoteCandidatesGrace.inMilliseconds
        guard let source = g_timeout_source_new(guint(clamping: max(milliseconds, 0))) else { return }
        g_source_set_callback(
            source,
            { data in
                ICENiceAgent.from(callbackUserData: data).noCandidatesTimerFired()
                return 0  // G_SOURCE_REMOVE
            }, callbackUserData, nil)
        g_source_attach(source, loop.contextPointer)
        noCandidatesTimer = source
    }

    private func cancelNoCandidatesTimer() {
        guard let source = noCandidatesTimer else { return }
        noCandidatesTimer = nil
        g_source_destroy(source)
        g_source_unref(source)
    }

    private func noCandidatesTimerFired() {
        cancelNoCandidatesTimer()
        guard agent != nil, !everConnected, !shared.state.isFailed, candidates(remote: true).isEmpty else { return }
        shared.publish(
            .failed(reason: ICEFailureReason.describe(local: candidates(remote: false), remote: [])), logger: logger)
    }

    // MARK: Restart

    /// RFC 8445 §9: new local credentials, remote candidates and checks cleared. libnice keeps the
    /// local candidates (same sockets), so they are trickled again under the new ufrag, followed by
    /// end-of-candidates once gathering has finished.
    func restart() throws(ICEError) -> ICEAgent.Credentials {
        guard let agent else { throw .closed }
        guard nice_agent_restart_stream(agent, streamID) != 0 else {
            throw .agentSetupFailed("nice_agent_restart_stream failed")
        }
        let credentials = try readLocalCredentials()
        everConnected = false
        remoteEndOfCandidates = false
        cancelNoCandidatesTimer()
        shared.restarted(credentials: credentials)
        logger.info("ICE restart", ["ice.ufrag": credentials.ufrag])
        shared.publish(.gathering, logger: logger)
        for line in localCandidateLines() {
            shared.candidate(.init(kind: .candidate(line), ufrag: credentials.ufrag))
        }
        if localGatheringDone { shared.candidate(.init(kind: .endOfCandidates, ufrag: credentials.ufrag)) }
        return credentials
    }

    // MARK: Close

    /// Detaches every callback and lets the agent go. Runs on the loop thread (from `close()`), or
    /// from `deinit` wherever the last reference drops (after the loop stopped, nothing can call back).
    func release() {
        cancelNoCandidatesTimer()
        guard let agent else { return }
        self.agent = nil
        shared.end()
        let object = UnsafeMutableRawPointer(agent)
        for id in signalHandlers { g_signal_handler_disconnect(object, id) }
        signalHandlers = []
        if streamID != 0 {
            nice_agent_attach_recv(agent, streamID, Self.componentID, loop.contextPointer, nil, nil)
            nice_agent_remove_stream(agent, streamID)
        }
        // close_async frees TURN allocations; its completion idles on the loop, so only ask for it there.
        if loop.isLoopThread { nice_agent_close_async(agent, nil, nil) }
        CShareGLib_object_unref(object)
    }

    // MARK: Callbacks (loop thread)

    private func received(_ buffer: UnsafeRawBufferPointer) {
        shared.countReceived(buffer.count)
        receiveHandler?(buffer)
    }

    private func componentStateChanged(stream: guint, component: guint, state raw: guint) {
        guard agent != nil, stream == streamID, component == Self.componentID else { return }
        let state = NiceComponentState(rawValue: raw)
        switch state {
        case NICE_COMPONENT_STATE_GATHERING: shared.publish(.gathering, logger: logger)
        case NICE_COMPONENT_STATE_CONNECTING: shared.publish(.checking, logger: logger)
        case NICE_COMPONENT_STATE_CONNECTED:
            everConnected = true
            shared.publish(.connected, logger: logger)
        case NICE_COMPONENT_STATE_READY:
            everConnected = true
            shared.publish(.completed, logger: logger)
        case NICE_COMPONENT_STATE_FAILED:
            shared.publish(.failed(reason: failureReason()), logger: logger)
        default:
            logger.debug("libnice component state \(String(cString: nice_component_state_to_string(state)))")
        }
    }

    private func gatheringDone(stream: guint) {
        guard agent != nil, stream == streamID else { return }
        localGatheringDone = true
        let ufrag = shared.localUfrag
        logger.debug("local gathering done")
        shared.candidate(.init(kind: .endOfCandidates, ufrag: ufrag))
        armNoCandidatesTimerIfNeeded()
    }

    private func newLocalCandidate(_ line: String, stream: guint, component: guint) {
        guard agent != nil, stream == streamID, component == Self.componentID else { return }
        logger.debug("local candidate", ["ice.candidate": line])
        shared.candidate(.init(kind: .candidate(line), ufrag: shared.localUfrag))
    }

    private func selectedPairChanged(_ pair: ICEAgent.SelectedPair, stream: guint) {
        guard agent != nil, stream == streamID else { return }
        shared.setSelectedPair(pair)
        logger.info("ICE selected pair \(pair.isRelayed ? "(relayed)" : "(direct)")", ["ice.pair": pair.description])
    }

    // MARK: Reading libnice's candidates

    /// `candidate:...` (the SDP attribute without "a=").
    private func sdpLine(for candidate: UnsafeMutablePointer<NiceCandidate>) -> String? {
        guard let agent, let text = nice_agent_generate_local_candidate_sdp(agent, candidate) else { return nil }
        defer { g_free(text) }
        let line = String(cString: text)
        return line.hasPrefix("a=") ? String(line.dropFirst(2)) : line
    }

    private func localCandidateLines() -> [String] {
        guard let agent else { return [] }
        var lines: [String] = []
        let list = nice_agent_get_local_candidates(agent, streamID, Self.componentID)
        var cursor = list
        while let node = cursor {
            if let candidate = node.pointee.data?.assumingMemoryBound(to: NiceCandidate.self) {
                if let line = sdpLine(for: candidate) { lines.append(line) }
                nice_candidate_free(candidate)
            }
            cursor = node.pointee.next
        }
        g_slist_free(list)
        return lines
    }

    private func candidates(remote: Bool) -> [ICECandidateSummary] {
        guard let agent else { return [] }
        let list =
            remote
            ? nice_agent_get_remote_candidates(agent, streamID, Self.componentID)
            : nice_agent_get_local_candidates(agent, streamID, Self.componentID)
        var result: [ICECandidateSummary] = []
        var cursor = list
        while let node = cursor {
            if let candidate = node.pointee.data?.assumingMemoryBound(to: NiceCandidate.self) {
                result.append(ICECandidateSummary(candidate.pointee))
                nice_candidate_free(candidate)
            }
            cursor = node.pointee.next
        }
        g_slist_free(list)
        return result
    }

    private func failureReason() -> String {
        if everConnected { return ICEAgent.consentLostReason }
        let local = candidates(remote: false), remote = candidates(remote: true)
        return ICEFailureReason.describe(local: local, remote: remote)
    }
}

@available(*, unavailable) extension ICENiceAgent: Sendable {}

/// A STUN server with its host resolved to a numeric address (libnice takes only those).
struct ICEResolvedServer: Sendable {
    let address: String
    let port: UInt16
}

/// A TURN server with its host resolved to a numeric address.
struct ICEResolvedTURN: Sendable {
    let address: String
    let server: ICEAgent.TURNServer
}

extension ICEAgent.SelectedPair {
    init(local: NiceCandidate, remote: NiceCandidate) {
        let localSummary = ICECandidateSummary(local), remoteSummary = ICECandidateSummary(remote)
        self.init(
            localAddress: localSummary.address, remoteAddress: remoteSummary.address,
            localType: localSummary.type, remoteType: remoteSummary.type,
            transport: localSummary.transport == .udp ? "udp" : "tcp")
    }
}

/// What the failure message and the selected pair need from a `NiceCandidate`, copied out.
struct ICECandidateSummary: Equatable {
    enum Transport: Equatable { case udp, tcpActive, tcpPassive, tcpSimultaneousOpen }
    var type: ICEAgent.CandidateType
    var transport: Transport
    var isIPv6: Bool
    var address: String

    init(type: ICEAgent.CandidateType, transport: Transport, isIPv6: Bool, address: String) {
        self.type = type
        self.transport = transport
        self.isIPv6 = isIPv6
        self.address = address
    }

    init(_ candidate: NiceCandidate) {
        switch candidate.type {
        case NICE_CANDIDATE_TYPE_SERVER_REFLEXIVE: type = .srflx
        case NICE_CANDIDATE_TYPE_PEER_REFLEXIVE: type = .prflx
        case NICE_CANDIDATE_TYPE_RELAYED: type = .relay
        default: type = .host
        }
        switch candidate.transport {
        case NICE_CANDIDATE_TRANSPORT_TCP_ACTIVE: transport = .tcpActive
        case NICE_CANDIDATE_TRANSPORT_TCP_PASSIVE: transport = .tcpPassive
        case NICE_CANDIDATE_TRANSPORT_TCP_SO: transport = .tcpSimultaneousOpen
        default: transport = .udp
        }
        var address = candidate.addr
        isIPv6 = nice_address_ip_version(&address) == 6
        var text = [CChar](repeating: 0, count: 64)
        nice_address_to_string(&address, &text)
        let host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let port = nice_address_get_port(&address)
        self.address = isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
