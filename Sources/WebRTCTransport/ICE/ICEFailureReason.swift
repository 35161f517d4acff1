/// Words for a failed ICE agent, from what libnice reports of its candidates. libnice does not
/// expose its check list, so the pair count is the pairs its rules form (RFC 8445 §6.1.2.2: same
/// address family, matching transport; a server-reflexive local candidate is checked through its
/// host base, so it adds none). By the time libnice reports FAILED every one of them has failed.
enum ICEFailureReason {
    static func describe(local: [ICECandidateSummary], remote: [ICECandidateSummary]) -> String {
        if remote.isEmpty {
            return
                "ICE failed: no remote candidates were received (\(count(local.count, "local candidate"))) — check the peer's network and the signalling"
        }
        let pairs = pairCount(local: local, remote: remote)
        return
            "ICE failed: no candidate pair succeeded (\(local.count) local, \(count(remote.count, "remote candidate")), \(count(pairs, "pair")) checked) — the peer is unreachable from here; a TURN server may be needed"
    }

    private static func count(_ n: Int, _ noun: String) -> String { n == 1 ? "1 \(noun)" : "\(n) \(noun)s" }

    static func pairCount(local: [ICECandidateSummary], remote: [ICECandidateSummary]) -> Int {
        var count = 0
        for l in local where l.type != .srflx {
            for r in remote where r.isIPv6 == l.isIPv6 && transportsPair(l.transport, r.transport) { count += 1 }
        }
        return count
    }

    private static func transportsPair(_ local: ICECandidateSummary.Transport, _ remote: ICECandidateSummary.Transport)
        -> Bool
    {
        switch (local, remote) {
        case (.udp, .udp), (.tcpActive, .tcpPassive), (.tcpPassive, .tcpActive),
            (.tcpSimultaneousOpen, .tcpSimultaneousOpen):
            true
        default: false
        }
    }
}
