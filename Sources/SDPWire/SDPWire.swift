// SDPWire: the Session Description Protocol (RFC 8866) as JSEP (RFC 9429) and Chromium use it.
//
// - `SessionDescription.parse(_:)` reads an offer or answer into values; `serialize()` writes one
//   back with CRLF line ends. Attributes this module does not model are kept in order, so
//   parse → serialize → parse gives the same value.
// - `ICECandidate(parsing:)` reads a trickled candidate line on its own.
// - `AnswerBuilder` answers a remote offer from `CodecCapabilities`; `OfferBuilder` makes our own.
//
// Pure values only: no sockets, no clocks, no randomness. Whatever varies (ICE credentials, DTLS
// fingerprint, session id, SSRCs) is passed in.
