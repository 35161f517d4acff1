internal import COpenSSL

/// The write side of a DTLS transport's OpenSSL connection: a BIO whose every write is one
/// datagram (OpenSSL writes each record, at most the MTU, in one call), handed to the transport's
/// outbox. A memory BIO would run the records of a flight together and lose the boundaries.
///
/// The method table is made once per process and never freed; it is immutable after `init`.
final class DTLSDatagramBIOMethod: @unchecked Sendable {
    static let shared = DTLSDatagramBIOMethod()

    /// `BIO_METHOD *`, kept for the life of the process.
    let method: OpaquePointer

    private init() {
        let type = BIO_get_new_index() | BIO_TYPE_SOURCE_SINK
        method = BIO_meth_new(type, "sharectl DTLS datagrams")!
        _ = BIO_meth_set_create(method) { bio in
            BIO_set_init(bio, 1)
            return 1
        }
        _ = BIO_meth_set_destroy(method) { bio in
            BIO_set_data(bio, nil)
            BIO_set_init(bio, 0)
            return 1
        }
        _ = BIO_meth_set_write(method) { bio, data, length in
            guard let userData = BIO_get_data(bio), let data, length > 0 else { return 0 }
            let datagram = Array(UnsafeRawBufferPointer(start: data, count: Int(length)))
            DTLSTransport.from(callbackUserData: userData).enqueueOutgoing(datagram)
            return length
        }
        _ = BIO_meth_set_ctrl(method) { _, command, _, _ in
            switch command {
            case BIO_CTRL_FLUSH: 1  // nothing is buffered here
            case BIO_CTRL_WPENDING, BIO_CTRL_PENDING: 0
            case BIO_CTRL_DGRAM_GET_MTU_OVERHEAD: 0  // the link MTU is the datagram payload size
            default: 0
            }
        }
    }

    /// A new BIO of this kind whose writes go to the object behind `userData`.
    func makeBIO(userData: UnsafeMutableRawPointer) -> OpaquePointer? {
        guard let bio = BIO_new(method) else { return nil }
        BIO_set_data(bio, userData)
        return bio
    }
}
